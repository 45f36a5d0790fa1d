// WriteFence: what a controller's writers check before each API write, so no write goes out once
// the controller was told to stop. The daemon hands every writer the leader elector's "leading"
// token, which is cancelled as soon as the lease is lost (client-go's LeaderElector.renew cancels
// its context) and on shutdown: a write asked for after that is refused here, locally, and the
// token also cancels the client's rate-limiter wait and the request in flight. Upstream gets the
// same from the context every client call takes. A sharded replica whose controllers serve a
// changing share of the namespaces adds a NamespaceFence: a write to a namespace outside its
// open ranges is refused too, and the write's admission is held until its answer is in. A
// default-constructed fence never refuses (library users and unit tests that do not stop).
// Copyable; thread-safe.
#pragma once

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/client/api_errors.h"
#include "pkg/controller/namespace_fence.h"
#include "pkg/util/result.h"

namespace kcm::controller {

class WriteFence {
 public:
  // What a write holds while it is in flight: its namespace's admission, if there is a
  // NamespaceFence.
  using Pass = std::optional<NamespaceFence::Admission>;

  WriteFence() = default;
  explicit WriteFence(std::stop_token stop, std::shared_ptr<NamespaceFence> namespaces = nullptr)
      : stop_(std::move(stop)), namespaces_(std::move(namespaces)) {}

  // A write to namespace `ns` may go out while the pass is held; once stopped, or with `ns`
  // outside the NamespaceFence's open ranges, a "Canceled" error naming `what` (e.g. "create
  // pod in ns/x"), the reason the client's own cancellations carry.
  Result<Pass> Admit(std::string_view what, std::string_view ns) const {
    if (stop_.stop_requested()) {
      return errors::Canceled("write refused: " + std::string(what) +
                              " asked for after the controller was stopped (leader lease lost "
                              "or shutting down)");
    }
    if (namespaces_ == nullptr) return Pass();
    Pass pass = namespaces_->Admit(ns);
    if (!pass) {
      return errors::Canceled("write refused: " + std::string(what) +
                              ": the namespace is not served by this replica");
    }
    return pass;
  }
  // For the client call, so a wait in its rate limiter or a request in flight ends too.
  std::stop_token token() const { return stop_; }
  // The pass's own cancellation (its namespace closed), for the client call too; a token that
  // never stops without a NamespaceFence.
  static std::stop_token TokenOf(const Pass& pass) {
    return pass ? pass->token() : std::stop_token();
  }

 private:
  std::stop_token stop_;
  std::shared_ptr<NamespaceFence> namespaces_;
};

// True for an error that only says the caller was stopped (a fenced write, a cancelled wait or
// request): not a failure worth an event or a condition.
inline bool IsStopped(const Error& e) {
  return e.reason == errors::reason::kCanceled;
}

}  // namespace kcm::controller
