// Request and ReconcileResult: what a Reconciler is asked to do and what it answers
// (controller-runtime's reconcile.Request / reconcile.Result). Plain data.
#pragma once

#include <chrono>
#include <string>

namespace kcm::runtime {

struct Request {
  std::string namespace_;  // empty for cluster-scoped objects
  std::string name;

  // "namespace/name", or "name" when cluster-scoped: the workqueue key.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  static Request FromKey(const std::string& key);
  friend bool operator==(const Request&, const Request&) = default;
};

struct ReconcileResult {
  // Requeue through the rate limiter (ignored when requeue_after > 0).
  bool requeue = false;
  // Requeue after this delay, without counting a failure.
  std::chrono::nanoseconds requeue_after{0};
  // The reconcile could not start yet, and what it waits for puts the request back on the queue
  // once it can (Controller::Enqueuer; e.g. the ConsistencyStore when the informers have applied
  // our last writes): no requeue here, and neither a success nor a failure for the rate limiter
  // (its per-item count stays as it was). A reaction in progress goes on in that reconcile.
  bool awaiting_wake = false;
};

}  // namespace kcm::runtime
