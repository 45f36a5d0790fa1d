// WriteFence: what a controller's writers check before each API write, so no write goes out once
// the controller was told to stop. The daemon hands every writer the leader elector's "leading"
// token, which is cancelled as soon as the lease is lost (client-go's LeaderElector.renew cancels
// its context) and on shutdown: a write asked for after that is refused here, locally, and the
// token also cancels the client's rate-limiter wait and the request in flight. Upstream gets the
// same from the context every client call takes. A default-constructed fence never refuses
// (library users and unit tests that do not stop). Copyable; thread-safe.
#pragma once

#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/client/api_errors.h"
#include "pkg/util/result.h"

namespace kcm::controller {

class WriteFence {
 public:
  WriteFence() = default;
  explicit WriteFence(std::stop_token stop) : stop_(std::move(stop)) {}

  bool Closed() const { return stop_.stop_requested(); }
  // Ok while writes may go out; once stopped, a "Canceled" error naming `what` (e.g.
  // "create pod in ns/x"), the reason the client's own cancellations carry.
  Status Check(std::string_view what) const {
    if (!Closed()) return OkStatus();
    return errors::Canceled("write refused: " + std::string(what) +
                            " asked for after the controller was stopped (leader lease lost or "
                            "shutting down)");
  }
  // For the client call, so a wait in its rate limiter or a request in flight ends too.
  std::stop_token token() const { return stop_; }

 private:
  std::stop_token stop_;
};

// True for an error that only says the caller was stopped (a fenced write, a cancelled wait or
// request): not a failure worth an event or a condition.
inline bool IsStopped(const Error& e) {
  return e.reason == errors::reason::kCanceled;
}

}  // namespace kcm::controller
