// Progress tracking (upstream progress.go): the Progressing condition, ReplicaFailure copied
// from the ReplicaSets, and a requeue just after the progress deadline.

#include "controllers/deployment/deployment_controller.h"
#include "pkg/util/klog.h"

namespace kcm::deployment {
namespace {

// `ReplicaSet "<new RS>" <what>`, or `Deployment "<name>" <what>` when there is no new RS yet
// (upstream syncRolloutStatus's messages).
std::string ProgressMessage(const api::Deployment& d, const ReplicaSetPtr& new_rs,
                            std::string_view what) {
  const std::string object = new_rs ? "ReplicaSet \"" + new_rs->metadata.name + "\""
                                    : "Deployment \"" + d.metadata.name + "\"";
  return object + " " + std::string(what);
}

}  // namespace

Result<runtime::ReconcileResult> DeploymentController::SyncRolloutStatus(
    const ReplicaSets& all_rss, const ReplicaSetPtr& new_rs, Deployment& d) {
  api::DeploymentStatus status = CalculateStatus(all_rss, new_rs, d);
  if (!util::HasProgressDeadline(d)) {
    util::RemoveDeploymentCondition(status, util::kConditionProgressing);
  }
  const api::Condition* current =
      util::GetDeploymentCondition(d.status, util::kConditionProgressing);
  // A finished rollout seen again on a resync: no progress to estimate.
  const bool is_complete = status.replicas == status.updated_replicas && current != nullptr &&
                           current->reason == util::kNewRSAvailableReason;
  if (util::HasProgressDeadline(d) && !is_complete) {
    if (util::DeploymentComplete(d, status)) {
      const std::string msg = ProgressMessage(d, new_rs, "has successfully progressed.");
      util::SetDeploymentCondition(
          status, util::NewDeploymentCondition(util::kConditionProgressing, "True",
                                               util::kNewRSAvailableReason, msg, Now()));
    } else if (util::DeploymentProgressing(d, status)) {
      const std::string msg = ProgressMessage(d, new_rs, "is progressing.");
      api::Condition cond = util::NewDeploymentCondition(
          util::kConditionProgressing, "True", util::kReplicaSetUpdatedReason, msg, Now());
      // Progress refreshes lastUpdateTime even with an unchanged reason (SetDeploymentCondition
      // would ignore it), keeping lastTransitionTime while the status stays True.
      if (current != nullptr) {
        if (current->status == "True") cond.last_transition_time = current->last_transition_time;
        util::RemoveDeploymentCondition(status, util::kConditionProgressing);
      }
      util::SetDeploymentCondition(status, std::move(cond));
    } else if (util::DeploymentTimedOut(d, status, Now())) {
      const std::string msg = ProgressMessage(d, new_rs, "has timed out progressing.");
      util::SetDeploymentCondition(
          status, util::NewDeploymentCondition(util::kConditionProgressing, "False",
                                               util::kTimedOutReason, msg, Now()));
    }
  }

  std::vector<api::Condition> failures = GetReplicaFailures(all_rss, new_rs);
  if (!failures.empty()) {
    util::SetDeploymentCondition(status, failures.front());
  } else {
    util::RemoveDeploymentCondition(status, util::kConditionReplicaFailure);
  }

  if (status == d.status) return RequeueStuckDeployment(d, status);
  d.status = std::move(status);
  if (Status s = UpdateStatus(d); !s.ok()) return s.error();
  return runtime::Done();
}

// ReplicaFailure conditions of the new RS, else of the old ones.
std::vector<api::Condition> DeploymentController::GetReplicaFailures(
    const ReplicaSets& all_rss, const ReplicaSetPtr& new_rs) const {
  std::vector<api::Condition> out;
  if (new_rs) {
    for (const auto& c : new_rs->status.conditions) {
      if (c.type == util::kConditionReplicaFailure) {
        out.push_back(util::ReplicaSetToDeploymentCondition(c));
      }
    }
  }
  if (!out.empty()) return out;
  for (const auto& rs : all_rss) {
    if (!rs || (new_rs && rs->metadata.uid == new_rs->metadata.uid)) continue;
    for (const auto& c : rs->status.conditions) {
      if (c.type == util::kConditionReplicaFailure) {
        out.push_back(util::ReplicaSetToDeploymentCondition(c));
      }
    }
  }
  return out;
}

// requeueStuckDeployment: without new progress, come back when the deadline passes so it is
// reported on time. Upstream calls enqueueAfter (or AddRateLimited) from inside the sync; here the
// delay is the sync's ReconcileResult, which the runtime turns into the same queue call.
runtime::ReconcileResult DeploymentController::RequeueStuckDeployment(
    const Deployment& d, const api::DeploymentStatus& new_status) const {
  const api::Condition* current =
      util::GetDeploymentCondition(d.status, util::kConditionProgressing);
  if (!util::HasProgressDeadline(d) || current == nullptr || !current->last_update_time) {
    return runtime::Done();
  }
  if (util::DeploymentComplete(d, new_status) || current->reason == util::kTimedOutReason) {
    return runtime::Done();
  }
  const auto deadline =
      *current->last_update_time + std::chrono::seconds(*d.spec.progress_deadline_seconds);
  const auto after = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Now());
  // Less than a second left: check again now, rate-limited; the Deployment will turn Complete or
  // TimedOut. The runtime answers RequeueRateLimited with AddRateLimited and no Forget, so checks
  // that keep finding the deadline "now" back off (5 ms, 10 ms, ...). Upstream calls AddRateLimited
  // and then handleErr forgets the key after the successful sync, so its checks repeat at the
  // limiter's base delay until the deadline passes.
  if (after < std::chrono::seconds(1)) {
    logger_.V(4).Info("Queueing up deployment for a progress check now", "deployment",
                      klog::KRef(d.metadata.namespace_, d.metadata.name));
    return runtime::RequeueRateLimited();
  }
  logger_.V(4).Info("Queueing up deployment for a progress check", "deployment",
                    klog::KRef(d.metadata.namespace_, d.metadata.name), "queueAfter",
                    std::chrono::seconds(after.count() / 1000000000));
  // One more second so the check does not land a few milliseconds before the deadline (upstream
  // issue 39785).
  return runtime::RequeueAfter(after + std::chrono::seconds(1));
}

}  // namespace kcm::deployment
