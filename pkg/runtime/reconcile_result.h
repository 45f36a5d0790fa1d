// ReconcileResult: what a reconcile asks the controller to do next, exactly one of four outcomes
// (controller-runtime's reconcile.Result, kube-rs' Action). An Error returned instead of a result
// is the fifth: it is logged, counted and retried through the rate limiter (or dropped, for a
// TerminalError or after ControllerOptions::max_retries). Plain data.
#pragma once

#include <chrono>
#include <variant>

namespace kcm::runtime {

// The four outcomes (controller-runtime's package name). Reconcilers build them with the
// functions below, which return a ReconcileResult, so that `return runtime::Done();` converts to
// a Result<ReconcileResult> in one step.
namespace reconcile {

// Nothing more to do: the rate limiter forgets the request.
struct Done {
  friend bool operator==(const Done&, const Done&) = default;
};

// Come back after `delay`, without counting a failure (a timer: minReadySeconds, a progress
// deadline). The rate limiter forgets the request first, so the delay is exactly this one; a
// delay of zero or less is Done (as controller-runtime treats RequeueAfter 0).
struct RequeueAfter {
  std::chrono::nanoseconds delay{0};
  friend bool operator==(const RequeueAfter&, const RequeueAfter&) = default;
};

// Come back through the rate limiter, as an error would, but without one to report.
struct RequeueRateLimited {
  friend bool operator==(const RequeueRateLimited&, const RequeueRateLimited&) = default;
};

// The reconcile could not start yet, and what it waits for puts the request back on the queue
// once it can (Controller::Enqueuer; e.g. the ConsistencyStore when the informers have applied
// our last writes): no requeue here, and neither a success nor a failure for the rate limiter
// (its per-item count stays as it was). A reaction in progress goes on in that reconcile.
struct AwaitWake {
  friend bool operator==(const AwaitWake&, const AwaitWake&) = default;
};

}  // namespace reconcile

using ReconcileResult = std::variant<reconcile::Done, reconcile::RequeueAfter,
                                     reconcile::RequeueRateLimited, reconcile::AwaitWake>;

inline ReconcileResult Done() {
  return reconcile::Done{};
}
inline ReconcileResult RequeueAfter(std::chrono::nanoseconds delay) {
  return reconcile::RequeueAfter{delay};
}
inline ReconcileResult RequeueRateLimited() {
  return reconcile::RequeueRateLimited{};
}
inline ReconcileResult AwaitWake() {
  return reconcile::AwaitWake{};
}

}  // namespace kcm::runtime
