#include "pkg/controller/pods_to_delete.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "pkg/metrics/metrics.h"

namespace kcm::controller {

const metrics::Histogram& SortingDeletionAgeRatioMetric() {
  static const metrics::Histogram histogram =
      metrics::HistogramVec(
          "replicaset_controller_sorting_deletion_age_ratio",
          "Ratio of the age of each Ready pod chosen for deletion on ReplicaSet scale-down to the "
          "age of the youngest Ready pod at that moment. Values below 2 show the log-scale "
          "ordering at work.",
          {}, metrics::ExponentialBuckets(0.25, 2, 6))
          .With(std::vector<std::string>{});
  return histogram;
}

namespace {

// For each Ready pod chosen, its age over the age of the youngest Ready pod. Upstream divides
// whole milliseconds as integers (so only integral ratios are seen, and a youngest pod created
// this millisecond divides by zero); we divide as doubles and skip a zero denominator.
void ReportSortingDeletionAgeRatio(const std::vector<PodPtr>& sorted, size_t diff, api::Time now) {
  std::optional<api::Time> youngest;
  for (const PodPtr& pod : sorted) {
    if (!IsPodReady(*pod) || !pod->metadata.creation_timestamp) continue;
    if (!youngest || *pod->metadata.creation_timestamp > *youngest) {
      youngest = pod->metadata.creation_timestamp;
    }
  }
  if (!youngest) return;
  using std::chrono::duration;
  using std::chrono::milliseconds;
  const double youngest_age = duration<double, milliseconds::period>(now - *youngest).count();
  if (youngest_age <= 0) return;
  for (size_t i = 0; i < diff; ++i) {
    const api::Pod& pod = *sorted[i];
    if (!IsPodReady(pod) || !pod.metadata.creation_timestamp) continue;
    const double age =
        duration<double, milliseconds::period>(now - *pod.metadata.creation_timestamp).count();
    SortingDeletionAgeRatioMetric().Observe(age / youngest_age);
  }
}

}  // namespace

ActivePodsWithRanks GetPodsRankedByRelatedPodsOnSameNode(std::vector<PodPtr> pods_to_rank,
                                                         const std::vector<PodPtr>& related_pods,
                                                         api::Time now) {
  std::unordered_map<std::string_view, int> pods_on_node;
  for (const PodPtr& pod : related_pods) {
    if (IsPodActive(*pod)) ++pods_on_node[pod->node_name.view()];
  }
  ActivePodsWithRanks ranked;
  ranked.rank.reserve(pods_to_rank.size());
  for (const PodPtr& pod : pods_to_rank) {
    auto it = pods_on_node.find(pod->node_name.view());
    ranked.rank.push_back(it == pods_on_node.end() ? 0 : it->second);
  }
  ranked.pods = std::move(pods_to_rank);
  ranked.now = now;
  return ranked;
}

std::vector<PodPtr> GetPodsToDelete(std::vector<PodPtr> filtered_pods,
                                    const std::vector<PodPtr>& related_pods, int diff,
                                    api::Time now) {
  const size_t count =
      static_cast<size_t>(std::clamp<int64_t>(diff, 0, static_cast<int64_t>(filtered_pods.size())));
  if (count < filtered_pods.size()) {
    ActivePodsWithRanks ranked =
        GetPodsRankedByRelatedPodsOnSameNode(std::move(filtered_pods), related_pods, now);
    ranked.Sort();
    filtered_pods = std::move(ranked.pods);
    ReportSortingDeletionAgeRatio(filtered_pods, count, now);
  }
  filtered_pods.resize(count);
  return filtered_pods;
}

}  // namespace kcm::controller
