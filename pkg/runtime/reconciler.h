// Reconciler: the per-object business logic a Controller runs. Reconcile reads the world (from
// listers), makes it right (through a client) and says whether to come back. It is called from
// several worker threads at once, but never for the same Request concurrently.
#pragma once

#include <functional>
#include <stop_token>

#include "pkg/runtime/reconcile_result.h"
#include "pkg/runtime/request.h"
#include "pkg/util/result.h"

namespace kcm::runtime {

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // An error requeues the request rate-limited; an Error with reason kTerminalReason is counted
  // but not retried. `stop` is requested when the controller shuts down.
  virtual Result<ReconcileResult> Reconcile(const Request& request, std::stop_token stop) = 0;
};

// Marks an error that retrying cannot fix (controller-runtime's TerminalError).
inline constexpr const char* kTerminalReason = "TerminalError";
inline Error TerminalError(std::string message) {
  return Error::Local(kTerminalReason, std::move(message));
}

// Adapts a function to the Reconciler interface.
class ReconcilerFunc final : public Reconciler {
 public:
  using Fn = std::function<Result<ReconcileResult>(const Request&, std::stop_token)>;
  explicit ReconcilerFunc(Fn fn) : fn_(std::move(fn)) {}
  Result<ReconcileResult> Reconcile(const Request& request, std::stop_token stop) override {
    return fn_(request, stop);
  }

 private:
  Fn fn_;
};

}  // namespace kcm::runtime
