// Choosing which pods a ReplicaSet deletes on scale-down (R9): rank by related pods on the
// same node, sort with ActivePodsWithRanks, take the first `diff`; and the
// replicaset_controller_sorting_deletion_age_ratio histogram (daemon.md M5). Thread-safe.
#pragma once

#include <vector>

#include "pkg/api/object_meta.h"
#include "pkg/controller/active_pods.h"
#include "pkg/metrics/metrics.h"

namespace kcm::controller {

// Ranks each of `pods_to_rank` by the number of active `related_pods` (pods of any ReplicaSet
// with the same owner, usually a superset of pods_to_rank) on the same node.
ActivePodsWithRanks GetPodsRankedByRelatedPodsOnSameNode(std::vector<PodPtr> pods_to_rank,
                                                         const std::vector<PodPtr>& related_pods,
                                                         api::Time now);

// The `diff` pods to delete from `filtered_pods` (the active claimed pods), first to go first.
// When every pod goes, nothing is sorted. diff is clamped to [0, filtered_pods.size()].
std::vector<PodPtr> GetPodsToDelete(std::vector<PodPtr> filtered_pods,
                                    const std::vector<PodPtr>& related_pods, int diff,
                                    api::Time now);

// replicaset_controller_sorting_deletion_age_ratio (buckets 0.25 … 8, as upstream): for each Ready
// pod GetPodsToDelete picks after sorting, its age over the youngest Ready pod's age.
const metrics::Histogram& SortingDeletionAgeRatioMetric();

}  // namespace kcm::controller
