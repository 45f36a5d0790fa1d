#include "pkg/controller/active_pods.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>

#include "pkg/util/klog.h"

namespace kcm::controller {
namespace {

// R9 rule 2. Phases other than Unknown and Running (unset in practice: active pods are never
// Succeeded/Failed) rank with Pending, as upstream's map lookup defaults to 0.
int PhaseOrdinal(api::PodPhase phase) {
  switch (phase) {
    case api::PodPhase::kUnknown:
      return 1;
    case api::PodPhase::kRunning:
      return 2;
    default:
      return 0;
  }
}

std::optional<api::Time> ReadyTime(const api::Pod& pod) {
  return IsPodReady(pod) ? pod.ready_transition_time : std::nullopt;
}

// t1 is after t2, where a missing time counts as after every real one (upstream afterOrZero).
bool AfterOrZero(const std::optional<api::Time>& t1, const std::optional<api::Time>& t2) {
  if (!t1 || !t2) return !t1;
  return *t1 > *t2;
}

// floor(log2(now - t)) in nanoseconds, -1 when t is not in the past.
int64_t LogarithmicRank(api::Time t, api::Time now) {
  const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  if (d <= 0) return -1;
  return static_cast<int64_t>(std::log2(static_cast<double>(d)));
}

// Newer first, by log-scale bucket; ties inside a bucket go by UID. Only called for t1 != t2.
bool NewerFirst(const std::optional<api::Time>& t1, const std::optional<api::Time>& t2,
                api::Time now, const api::Pod& a, const api::Pod& b) {
  if (!t1 || !t2) return AfterOrZero(t1, t2);
  const int64_t diff = LogarithmicRank(*t1, now) - LogarithmicRank(*t2, now);
  if (diff == 0) return a.metadata.uid < b.metadata.uid;
  return diff < 0;
}

}  // namespace

bool IsPodActive(const api::Pod& pod) {
  return pod.phase != api::PodPhase::kSucceeded && pod.phase != api::PodPhase::kFailed &&
         !pod.metadata.deletion_timestamp.has_value();
}

bool IsPodReady(const api::Pod& pod) {
  return pod.ready == api::ConditionStatus::kTrue;
}

bool IsPodAvailable(const api::Pod& pod, int32_t min_ready_seconds, api::Time now) {
  if (!IsPodReady(pod)) return false;
  if (min_ready_seconds == 0) return true;
  if (!pod.ready_transition_time) return false;
  return *pod.ready_transition_time + std::chrono::seconds(min_ready_seconds) < now;
}

std::vector<PodPtr> FilterActivePods(const std::vector<PodPtr>& pods) {
  std::vector<PodPtr> active;
  active.reserve(pods.size());
  for (const PodPtr& pod : pods) {
    if (IsPodActive(*pod)) {
      active.push_back(pod);
    } else {
      KLOG_V_INFOS(4, "Ignoring inactive pod", "pod",
                   klog::KRef(pod->metadata.namespace_, pod->metadata.name));
    }
  }
  return active;
}

bool ActivePodsWithRanks::Less(size_t i, size_t j) const {
  const api::Pod& a = *pods[i];
  const api::Pod& b = *pods[j];
  // 1. Unscheduled pods cost nothing to remove and may never get a node.
  if (a.node_name != b.node_name && (a.node_name.empty() || b.node_name.empty())) {
    return a.node_name.empty();
  }
  // 2. Pending < Unknown < Running.
  if (PhaseOrdinal(a.phase) != PhaseOrdinal(b.phase)) {
    return PhaseOrdinal(a.phase) < PhaseOrdinal(b.phase);
  }
  // 3. Not ready < ready.
  if (IsPodReady(a) != IsPodReady(b)) return !IsPodReady(a);
  // 4. The user's own preference.
  if (a.deletion_cost != b.deletion_cost) return a.deletion_cost < b.deletion_cost;
  // 5. Doubled-up pods first, to spread the survivors across nodes.
  if (rank[i] != rank[j]) return rank[i] > rank[j];
  // 6. Ready for less time first.
  if (IsPodReady(a) && IsPodReady(b)) {
    const auto ready_a = ReadyTime(a);
    const auto ready_b = ReadyTime(b);
    if (ready_a != ready_b) return NewerFirst(ready_a, ready_b, now, a, b);
  }
  // 7. Crash-looping pods first.
  if (a.restart_count_max != b.restart_count_max) {
    return a.restart_count_max > b.restart_count_max;
  }
  // 8. Newer pods first.
  if (a.metadata.creation_timestamp != b.metadata.creation_timestamp) {
    return NewerFirst(a.metadata.creation_timestamp, b.metadata.creation_timestamp, now, a, b);
  }
  return false;
}

void ActivePodsWithRanks::Sort() {
  std::vector<size_t> order(pods.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [this](size_t i, size_t j) { return Less(i, j); });
  std::vector<PodPtr> sorted_pods;
  std::vector<int> sorted_rank;
  sorted_pods.reserve(order.size());
  sorted_rank.reserve(order.size());
  for (size_t k : order) {
    sorted_pods.push_back(std::move(pods[k]));
    sorted_rank.push_back(rank[k]);
  }
  pods = std::move(sorted_pods);
  rank = std::move(sorted_rank);
}

}  // namespace kcm::controller
