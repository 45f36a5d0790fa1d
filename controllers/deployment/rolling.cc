// RollingUpdate (upstream rolling.go): grow the new RS within maxSurge, shrink old RSs within
// maxUnavailable, unhealthy replicas first.

#include <algorithm>

#include "controllers/deployment/deployment_controller.h"
#include "pkg/controller/replicaset_sorting.h"
#include "pkg/util/klog.h"

namespace kcm::deployment {

Result<runtime::ReconcileResult> DeploymentController::RolloutRolling(Deployment& d,
                                                                      const ReplicaSets& rss) {
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, true);
  if (!all.ok()) return all.error();
  ReplicaSetPtr new_rs = all->new_rs;
  ReplicaSets all_rss = all->old_rss;
  if (new_rs) all_rss.push_back(new_rs);

  // Scale up, if we can.
  Result<bool> scaled_up = ReconcileNewReplicaSet(all_rss, new_rs, d);
  if (!scaled_up.ok()) return scaled_up.error();
  if (*scaled_up) return SyncRolloutStatus(all_rss, new_rs, d);

  // Scale down, if we can.
  Result<bool> scaled_down =
      ReconcileOldReplicaSets(all_rss, util::FilterActiveReplicaSets(all->old_rss), new_rs, d);
  if (!scaled_down.ok()) return scaled_down.error();
  if (*scaled_down) return SyncRolloutStatus(all_rss, new_rs, d);

  if (util::DeploymentComplete(d, d.status)) {
    if (Status s = CleanupDeployment(all->old_rss, d); !s.ok()) return s.error();
  }
  return SyncRolloutStatus(all_rss, new_rs, d);
}

// upstream reconcileNewReplicaSet.
Result<bool> DeploymentController::ReconcileNewReplicaSet(const ReplicaSets& all_rss,
                                                          const ReplicaSetPtr& new_rs,
                                                          const Deployment& d) {
  if (!new_rs) return false;
  if (new_rs->spec.replicas == d.spec.replicas) return false;  // already at size
  if (new_rs->spec.replicas > d.spec.replicas) {
    auto r = ScaleReplicaSetAndRecordEvent(new_rs, d.spec.replicas, d);
    if (!r.ok()) return r.error();
    return r->scaled;
  }
  Result<int32_t> count = util::NewRSNewReplicas(d, all_rss, *new_rs);
  if (!count.ok()) return count.error();
  auto r = ScaleReplicaSetAndRecordEvent(new_rs, *count, d);
  if (!r.ok()) return r.error();
  return r->scaled;
}

// upstream reconcileOldReplicaSets.
Result<bool> DeploymentController::ReconcileOldReplicaSets(const ReplicaSets& all_rss,
                                                           ReplicaSets old_rss,
                                                           const ReplicaSetPtr& new_rs,
                                                           const Deployment& d) {
  const int32_t old_pods = util::GetReplicaCountForReplicaSets(old_rss);
  if (old_pods == 0) return false;  // nothing to scale down
  const int32_t all_pods = util::GetReplicaCountForReplicaSets(all_rss);
  const int32_t min_available = d.spec.replicas - util::MaxUnavailable(d);
  const int32_t new_rs_unavailable =
      new_rs ? new_rs->spec.replicas - new_rs->status.available_replicas : 0;
  // How many old pods may go without dropping below minAvailable, counting the new RS's
  // not-yet-available pods as unavailable:
  //   allPods − minAvailable − newRSUnavailable
  const int32_t max_scaled_down = all_pods - min_available - new_rs_unavailable;
  if (max_scaled_down <= 0) return false;

  // Unhealthy old replicas go first: they cost no availability and would otherwise block the
  // rollout (upstream issue 16737).
  // A failure here is not the sync's: upstream reconcileOldReplicaSets reports "nothing scaled
  // down" and the sync goes on to write the rollout status. The typical one is an old RS whose
  // status predates our own scale-down of it (see CleanupUnhealthyReplicas); the RS controller's
  // next status write brings an event that syncs again, so a retry of its own would only spin.
  Result<int32_t> cleaned = CleanupUnhealthyReplicas(old_rss, d, max_scaled_down);
  if (!cleaned.ok()) {
    logger_.V(4).Info("Not scaling down old RSes this time", "deployment",
                      klog::KRef(d.metadata.namespace_, d.metadata.name), "err",
                      cleaned.error().message);
    return false;
  }
  logger_.V(4).Info("Cleaned up unhealthy replicas from old RSes", "count", *cleaned);

  ReplicaSets after_cleanup = old_rss;
  if (new_rs) after_cleanup.push_back(new_rs);
  Result<int32_t> scaled = ScaleDownOldReplicaSetsForRollingUpdate(after_cleanup, old_rss, d);
  if (!scaled.ok()) {
    logger_.V(4).Info("Not scaling down old RSes this time", "deployment",
                      klog::KRef(d.metadata.namespace_, d.metadata.name), "err",
                      scaled.error().message);
    return false;
  }
  logger_.V(4).Info("Scaled down old RSes", "deployment",
                    klog::KRef(d.metadata.namespace_, d.metadata.name), "count", *scaled);
  return *cleaned + *scaled > 0;
}

Result<int32_t> DeploymentController::CleanupUnhealthyReplicas(ReplicaSets& old_rss,
                                                               const Deployment& d,
                                                               int32_t max_cleanup_count) {
  std::stable_sort(old_rss.begin(), old_rss.end(), controller::ReplicaSetsByCreationTimestamp{});
  int32_t total = 0;
  for (auto& rs : old_rss) {
    if (total >= max_cleanup_count) break;
    if (rs->spec.replicas == 0) continue;
    if (rs->spec.replicas == rs->status.available_replicas) continue;  // all healthy
    const int32_t count =
        std::min(max_cleanup_count - total, rs->spec.replicas - rs->status.available_replicas);
    const int32_t new_count = rs->spec.replicas - count;
    // More available than the spec: the RS's status predates a scale-down. Its available count
    // would let ScaleDownOldReplicaSetsForRollingUpdate remove too much, so this sync stops here
    // (as upstream) and retries once the status caught up.
    if (new_count > rs->spec.replicas || new_count < 0) {
      return Error::Local("InvalidArgument",
                          "when cleaning up unhealthy replicas, got invalid request to scale "
                          "down " +
                              rs->metadata.namespace_ + "/" + rs->metadata.name + " " +
                              std::to_string(rs->spec.replicas) + " -> " +
                              std::to_string(new_count));
    }
    auto r = ScaleReplicaSetAndRecordEvent(rs, new_count, d);
    if (!r.ok()) return r.error();
    total += count;
    rs = r->rs;
  }
  return total;
}

Result<int32_t> DeploymentController::ScaleDownOldReplicaSetsForRollingUpdate(
    const ReplicaSets& all_rss, ReplicaSets old_rss, const Deployment& d) {
  const int32_t min_available = d.spec.replicas - util::MaxUnavailable(d);
  const int32_t available = util::GetAvailableReplicaCountForReplicaSets(all_rss);
  if (available <= min_available) return 0;
  std::stable_sort(old_rss.begin(), old_rss.end(), controller::ReplicaSetsByCreationTimestamp{});
  const int32_t total_to_scale_down = available - min_available;
  int32_t total = 0;
  for (const auto& rs : old_rss) {
    if (total >= total_to_scale_down) break;
    if (rs->spec.replicas == 0) continue;
    const int32_t count = std::min(rs->spec.replicas, total_to_scale_down - total);
    auto r = ScaleReplicaSetAndRecordEvent(rs, rs->spec.replicas - count, d);
    if (!r.ok()) return r.error();
    total += count;
  }
  return total;
}

}  // namespace kcm::deployment
