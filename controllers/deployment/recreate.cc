// Recreate (upstream recreate.go): old RSs to zero, wait until no old pod runs, then the new
// RS to full size.
#include <glog/logging.h>

#include "controllers/deployment/deployment_controller.h"

namespace kcm::deployment {

namespace {

// Old pods still running (or possibly running: Unknown counts), or old RSs still reporting pods.
bool OldPodsRunning(const ReplicaSetPtr& new_rs, const ReplicaSets& old_rss,
                    const PodMap& pod_map) {
  if (util::GetActualReplicaCountForReplicaSets(old_rss) > 0) return true;
  for (const auto& [rs_uid, pods] : pod_map) {
    if (new_rs && new_rs->metadata.uid == rs_uid) continue;
    for (const auto& pod : pods) {
      if (pod->phase == api::PodPhase::kFailed || pod->phase == api::PodPhase::kSucceeded) {
        continue;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

Result<runtime::ReconcileResult> DeploymentController::RolloutRecreate(Deployment& d,
                                                                       const ReplicaSets& rss,
                                                                       const PodMap& pod_map) {
  // The new RS is not created until the old pods are gone.
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, false);
  if (!all.ok()) return all.error();
  ReplicaSetPtr new_rs = all->new_rs;
  ReplicaSets old_rss = all->old_rss;
  ReplicaSets all_rss = old_rss;
  if (new_rs) all_rss.push_back(new_rs);

  ReplicaSets active_old = util::FilterActiveReplicaSets(old_rss);
  Result<bool> scaled_down = ScaleDownOldReplicaSetsForRecreate(active_old, d);
  if (!scaled_down.ok()) return scaled_down.error();
  if (*scaled_down) return SyncRolloutStatus(all_rss, new_rs, d);

  if (OldPodsRunning(new_rs, old_rss, pod_map)) return SyncRolloutStatus(all_rss, new_rs, d);

  if (!new_rs) {
    Result<AllReplicaSets> created = GetAllReplicaSetsAndSyncRevision(d, rss, true);
    if (!created.ok()) return created.error();
    new_rs = created->new_rs;
    old_rss = created->old_rss;
    all_rss = old_rss;
    if (new_rs) all_rss.push_back(new_rs);
  }
  if (new_rs) {
    auto r = ScaleReplicaSetAndRecordEvent(new_rs, d.spec.replicas, d);
    if (!r.ok()) return r.error();
  }
  if (util::DeploymentComplete(d, d.status)) {
    if (Status s = CleanupDeployment(old_rss, d); !s.ok()) return s.error();
  }
  return SyncRolloutStatus(all_rss, new_rs, d);
}

Result<bool> DeploymentController::ScaleDownOldReplicaSetsForRecreate(ReplicaSets& old_rss,
                                                                      const Deployment& d) {
  bool scaled = false;
  for (auto& rs : old_rss) {
    if (rs->spec.replicas == 0) continue;
    auto r = ScaleReplicaSetAndRecordEvent(rs, 0, d);
    if (!r.ok()) return r.error();
    if (r->scaled) {
      rs = r->rs;
      scaled = true;
    }
  }
  return scaled;
}

}  // namespace kcm::deployment
