// Pod predicates and the deletion ranking the ReplicaSet controller uses (R9, R10, R14):
// which pods count, which are ready/available, and which go first on scale-down (upstream
// ActivePodsWithRanks). Pure functions over immutable pods; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pkg/api/object_meta.h"
#include "pkg/api/pod.h"

namespace kcm::controller {

using PodPtr = std::shared_ptr<const api::Pod>;

// R10: not Succeeded, not Failed, and not being deleted.
bool IsPodActive(const api::Pod& pod);
// The Ready condition is True.
bool IsPodReady(const api::Pod& pod);
// R14: Ready, and either minReadySeconds is 0 or Ready became true more than minReadySeconds
// before `now` (strictly, as upstream podutil.IsPodAvailable).
bool IsPodAvailable(const api::Pod& pod, int32_t min_ready_seconds, api::Time now);

// The active pods of `pods`, order kept (inactive ones are logged at V(4)).
std::vector<PodPtr> FilterActivePods(const std::vector<PodPtr>& pods);

// Pods with a rank each (how many related active pods share the pod's node) and the time the
// log-scale age comparisons are made against. Less(i, j) is true when pod i should be deleted
// before pod j (R9, upstream ActivePodsWithRanks.Less); rules in order of precedence:
//   1. unscheduled before scheduled
//   2. Pending (and unset/other phases) < Unknown < Running
//   3. not Ready before Ready
//   4. lower controller.kubernetes.io/pod-deletion-cost first (absent or invalid = 0)
//   5. higher rank (more related pods on the same node) first
//   6. both Ready: Ready more recently first
//   7. higher max container restart count first
//   8. newer creationTimestamp first
// Times in 6 and 8 compare by floor(log2(nanoseconds since t)) so pods of similar age tie and the
// UID decides (a pseudo-random pick that spreads deletions, LogarithmicScaleDown, GA in 1.31); a
// missing time sorts as the newest. As upstream, a UID tie-break in 6 ends the comparison.
struct ActivePodsWithRanks {
  std::vector<PodPtr> pods;
  std::vector<int> rank;  // same length as pods
  api::Time now;

  bool Less(size_t i, size_t j) const;
  // Sorts pods (and rank with them) by Less. Stable: Less is not a strict weak ordering (the
  // bucketed comparisons are not transitive), which std::sort must not be given.
  void Sort();
};

}  // namespace kcm::controller
