// Shared sync steps (upstream sync.go): the new/old ReplicaSets and revisions, scaling and
// proportional scaling, pause, history cleanup and status.
#include <glog/logging.h>

#include <algorithm>

#include "controllers/deployment/deployment_controller.h"
#include "pkg/api/hash.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/pod_template.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/replicaset_sorting.h"
#include "pkg/controller/write_fence.h"
#include "pkg/util/klog.h"

namespace kcm::deployment {

namespace {

using api::json::Value;

Value StringMap(const std::map<std::string, std::string>& m) {
  Value out = Value::MakeObject();
  for (const auto& [k, v] : m) out.Set(k, Value::String(v));
  return out;
}

// Replaces metadata.annotations in `raw` with `annotations` (removed when empty).
Status SetAnnotations(Value& obj, const std::map<std::string, std::string>& annotations) {
  if (annotations.empty()) {
    api::json::ErasePath(obj, {"metadata", "annotations"});
    return OkStatus();
  }
  return api::json::SetPath(obj, {"metadata", "annotations"}, StringMap(annotations));
}

}  // namespace

Status DeploymentController::UpdateStatus(Deployment& d) {
  // The client writes d's annotations with the status (ResourceTraits<Deployment>::EncodeStatus).
  auto updated = deployments_->UpdateStatus(d, d.status);
  if (!updated.ok()) return updated.error();
  d = **updated;
  RecordWrite(d, api::kDeployments.GroupResource(), d.metadata.resource_version);
  return OkStatus();
}

// upstream checkPausedConditions: Progressing=Unknown DeploymentPaused / DeploymentResumed when
// pausing or resuming.
Status DeploymentController::CheckPausedConditions(Deployment& d) {
  if (!util::HasProgressDeadline(d)) return OkStatus();
  const api::Condition* cond = util::GetDeploymentCondition(d.status, util::kConditionProgressing);
  // A reported lack of progress is not overwritten by a paused condition.
  if (cond != nullptr && cond->reason == util::kTimedOutReason) return OkStatus();
  const bool paused_cond_exists = cond != nullptr && cond->reason == util::kPausedDeployReason;
  if (d.spec.paused && !paused_cond_exists) {
    util::SetDeploymentCondition(
        d.status,
        util::NewDeploymentCondition(util::kConditionProgressing, "Unknown",
                                     util::kPausedDeployReason, "Deployment is paused", Now()));
  } else if (!d.spec.paused && paused_cond_exists) {
    util::SetDeploymentCondition(
        d.status,
        util::NewDeploymentCondition(util::kConditionProgressing, "Unknown",
                                     util::kResumedDeployReason, "Deployment is resumed", Now()));
  } else {
    return OkStatus();
  }
  return UpdateStatus(d);
}

// Paused deployments and scaling events: scale only, no rollout.
Status DeploymentController::Sync(Deployment& d, const ReplicaSets& rss) {
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, false);
  if (!all.ok()) return all.error();
  if (Status s = Scale(d, all->new_rs, all->old_rss); !s.ok()) return s;
  // History is cleaned up while paused unless a rollback is in flight.
  if (d.spec.paused && !util::GetRollbackTo(d)) {
    if (Status s = CleanupDeployment(all->old_rss, d); !s.ok()) return s;
  }
  ReplicaSets all_rss = all->old_rss;
  if (all->new_rs) all_rss.push_back(all->new_rs);
  return SyncDeploymentStatus(all_rss, all->new_rs, d);
}

Result<DeploymentController::AllReplicaSets> DeploymentController::GetAllReplicaSetsAndSyncRevision(
    Deployment& d, const ReplicaSets& rss, bool create_if_not_existed) {
  const ReplicaSetPtr existing = util::FindNewReplicaSet(d, rss);
  ReplicaSets old_rss = util::FindOldReplicaSets(d, rss, existing);
  Result<ReplicaSetPtr> new_rs = GetNewReplicaSet(d, existing, old_rss, create_if_not_existed);
  if (!new_rs.ok()) return new_rs.error();
  return AllReplicaSets{*new_rs, std::move(old_rss)};
}

// upstream getNewReplicaSet: finds the new RS and brings its revision annotations up to date, or
// creates it.
Result<ReplicaSetPtr> DeploymentController::GetNewReplicaSet(Deployment& d,
                                                             const ReplicaSetPtr& existing,
                                                             const ReplicaSets& old_rss,
                                                             bool create_if_not_existed) {
  const std::string new_revision = std::to_string(util::MaxRevision(old_rss) + 1);

  if (existing) {
    std::map<std::string, std::string> annotations = existing->metadata.annotations;
    const bool annotations_updated =
        util::SetNewReplicaSetAnnotations(d, annotations, new_revision, true);
    const bool min_ready_needs_update =
        existing->spec.min_ready_seconds != d.spec.min_ready_seconds;
    if (annotations_updated || min_ready_needs_update) {
      const std::string raw = existing->raw_json.str();
      Result<std::string> body = api::MutateRawJson(raw, [&](Value& obj) -> Status {
        if (Status s = SetAnnotations(obj, annotations); !s.ok()) return s;
        if (d.spec.min_ready_seconds == 0) {
          api::json::ErasePath(obj, {"spec", "minReadySeconds"});
          return OkStatus();
        }
        return api::json::SetPath(obj, {"spec", "minReadySeconds"},
                                  Value::Int(d.spec.min_ready_seconds));
      });
      if (!body.ok()) return body.error();
      Result<ReplicaSetPtr> updated = replicasets_->Update(
          existing->metadata.namespace_, existing->metadata.name, std::move(body).value());
      if (updated.ok()) {
        RecordWrite(d, api::kReplicaSets.GroupResource(), (*updated)->metadata.resource_version);
      }
      return updated;
    }
    // The Deployment's revision follows the one the new RS already carries.
    const auto rev = annotations.find(std::string(util::kRevisionAnnotation));
    // d's annotations are an immutable api::Annotations: edit a copy, then put it back.
    std::map<std::string, std::string> d_annotations = d.metadata.annotations;
    bool needs_update =
        util::SetDeploymentRevision(d_annotations, rev == annotations.end() ? "" : rev->second);
    d.metadata.annotations = std::move(d_annotations);
    // First time progress is tracked for this rollout: note when we found its RS.
    if (util::HasProgressDeadline(d) &&
        util::GetDeploymentCondition(d.status, util::kConditionProgressing) == nullptr) {
      util::SetDeploymentCondition(
          d.status, util::NewDeploymentCondition(
                        util::kConditionProgressing, "True", util::kFoundNewRSReason,
                        "Found new replica set \"" + existing->metadata.name + "\"", Now()));
      needs_update = true;
    }
    if (needs_update) {
      if (Status s = UpdateStatus(d); !s.ok()) return s.error();
    }
    return existing;
  }

  if (!create_if_not_existed) return ReplicaSetPtr();

  // The new RS, named after the template hash (+ collisionCount).
  Result<Value> tmpl = d.spec.pod_template.ToJson();
  if (!tmpl.ok()) return tmpl.error();
  const std::string hash = api::ComputePodTemplateHash(*tmpl, d.status.collision_count);
  const std::string rs_name = d.metadata.name + "-" + hash;

  api::ReplicaSet planned;
  planned.metadata.name = rs_name;
  planned.spec.replicas = 0;
  ReplicaSets all_rss = old_rss;
  all_rss.push_back(std::make_shared<const api::ReplicaSet>(planned));
  Result<int32_t> new_replicas = util::NewRSNewReplicas(d, all_rss, planned);
  if (!new_replicas.ok()) return new_replicas.error();

  api::NewReplicaSetOptions opts;
  opts.pod_template_hash = hash;
  opts.replicas = *new_replicas;
  util::SetNewReplicaSetAnnotations(d, opts.annotations, new_revision, false);
  Result<std::string> body = api::NewReplicaSetFromDeployment(d, opts);
  if (!body.ok()) return body.error();

  bool already_exists = false;
  ReplicaSetPtr created;
  Result<ReplicaSetPtr> create = replicasets_->Create(d.metadata.namespace_, std::move(*body));
  if (create.ok()) {
    created = *create;
    RecordWrite(d, api::kReplicaSets.GroupResource(), created->metadata.resource_version);
  } else if (errors::IsAlreadyExists(create.error())) {
    already_exists = true;
    // Ours already (an earlier sync created it and the cache has not seen it), or a collision.
    auto rs = rs_informer_.lister.ByNamespace(d.metadata.namespace_).Get(rs_name);
    if (!rs.ok()) return rs.error();
    const api::OwnerReference* ref = (*rs)->metadata.ControllerRef();
    Result<bool> equal = api::EqualIgnoreHash(d.spec.pod_template, (*rs)->spec.pod_template);
    if (ref != nullptr && ref->uid == d.metadata.uid && equal.ok() && *equal) {
      created = *rs;
    } else {
      // A different RS holds the name. Bump collisionCount so the next hash differs.
      const int32_t before = d.status.collision_count.value_or(0);
      d.status.collision_count = before + 1;
      if (UpdateStatus(d).ok()) {
        logger_.Info("Found a hash collision for deployment - bumping collisionCount to resolve it",
                     "deployment", klog::KRef(d.metadata.namespace_, d.metadata.name),
                     "oldCollisionCount", before, "newCollisionCount", before + 1);
      }
      return create.error();
    }
  } else if (errors::IsNamespaceTerminating(create.error()) ||
             controller::IsStopped(create.error())) {
    // A create refused because we were stopped (lease lost) is no failure to report.
    return create.error();
  } else {
    const std::string msg =
        "Failed to create new replica set \"" + rs_name + "\": " + create.error().message;
    if (util::HasProgressDeadline(d)) {
      util::SetDeploymentCondition(
          d.status, util::NewDeploymentCondition(util::kConditionProgressing, "False",
                                                 util::kFailedRSCreateReason, msg, Now()));
      // Best effort: the create error is what is returned.
      (void)UpdateStatus(d);
    }
    Eventf(d, "Warning", util::kFailedRSCreateReason, msg);
    return create.error();
  }

  if (!already_exists && *new_replicas > 0) {
    Eventf(d, "Normal", "ScalingReplicaSet",
           "Scaled up replica set " + created->metadata.name + " from 0 to " +
               std::to_string(*new_replicas));
  }
  std::map<std::string, std::string> d_annotations = d.metadata.annotations;
  bool needs_update = util::SetDeploymentRevision(d_annotations, new_revision);
  d.metadata.annotations = std::move(d_annotations);
  if (!already_exists && util::HasProgressDeadline(d)) {
    util::SetDeploymentCondition(
        d.status, util::NewDeploymentCondition(
                      util::kConditionProgressing, "True", util::kNewReplicaSetReason,
                      "Created new replica set \"" + created->metadata.name + "\"", Now()));
    needs_update = true;
  }
  if (needs_update) {
    if (Status s = UpdateStatus(d); !s.ok()) return s.error();
  }
  return created;
}

// upstream scale: proportional scaling and scale-only syncs.
Status DeploymentController::Scale(Deployment& d, const ReplicaSetPtr& new_rs,
                                   const ReplicaSets& old_rss) {
  // One active RS (or none: the newest) takes the whole size.
  if (ReplicaSetPtr target = util::FindActiveOrLatest(new_rs, old_rss)) {
    if (target->spec.replicas == d.spec.replicas) return OkStatus();
    auto r = ScaleReplicaSetAndRecordEvent(target, d.spec.replicas, d);
    return r.ok() ? OkStatus() : Status(r.error());
  }
  // A saturated new RS (e.g. just adopted): old RSs go to zero.
  if (util::IsSaturated(d, new_rs.get())) {
    for (const auto& old : util::FilterActiveReplicaSets(old_rss)) {
      auto r = ScaleReplicaSetAndRecordEvent(old, 0, d);
      if (!r.ok()) return r.error();
    }
    return OkStatus();
  }
  if (!util::IsRollingUpdate(d)) return OkStatus();

  // Several active RSs and a new size: share the difference in proportion to their sizes.
  ReplicaSets all = old_rss;
  if (new_rs) all.push_back(new_rs);
  ReplicaSets active = util::FilterActiveReplicaSets(all);
  const int32_t all_replicas = util::GetReplicaCountForReplicaSets(active);
  const int32_t allowed = d.spec.replicas > 0 ? d.spec.replicas + util::MaxSurge(d) : 0;
  const int32_t to_add = allowed - all_replicas;

  std::string operation;
  if (to_add > 0) {
    // Equal sizes: newer RSs grow first.
    std::stable_sort(active.begin(), active.end(), controller::ReplicaSetsBySizeNewer{});
    operation = "up";
  } else if (to_add < 0) {
    // Equal sizes: older RSs shrink first.
    std::stable_sort(active.begin(), active.end(), controller::ReplicaSetsBySizeOlder{});
    operation = "down";
  }
  int32_t added = 0;
  std::map<std::string, int32_t> name_to_size;
  for (const auto& rs : active) {
    if (to_add != 0) {
      const int32_t proportion = util::GetProportion(rs.get(), d, to_add, added);
      name_to_size[rs->metadata.name] = rs->spec.replicas + proportion;
      added += proportion;
    } else {
      name_to_size[rs->metadata.name] = rs->spec.replicas;
    }
  }
  for (size_t i = 0; i < active.size(); ++i) {
    const auto& rs = active[i];
    int32_t& size = name_to_size[rs->metadata.name];
    // The rounding leftover goes to the largest RS.
    if (i == 0 && to_add != 0) size = std::max(0, size + to_add - added);
    auto r = ScaleReplicaSet(rs, size, d, operation);
    if (!r.ok()) return r.error();  // requeued; the next sync continues
  }
  return OkStatus();
}

Result<DeploymentController::ScaleResult> DeploymentController::ScaleReplicaSetAndRecordEvent(
    const ReplicaSetPtr& rs, int32_t new_scale, const Deployment& d) {
  if (rs->spec.replicas == new_scale) return ScaleResult{false, rs};
  return ScaleReplicaSet(rs, new_scale, d, rs->spec.replicas < new_scale ? "up" : "down");
}

Result<DeploymentController::ScaleResult> DeploymentController::ScaleReplicaSet(
    const ReplicaSetPtr& rs, int32_t new_scale, const Deployment& d, const std::string& operation) {
  const bool size_needs_update = rs->spec.replicas != new_scale;
  const int32_t desired = d.spec.replicas;
  const int32_t max_replicas = d.spec.replicas + util::MaxSurge(d);
  const bool annotations_need_update =
      util::ReplicasAnnotationsNeedUpdate(*rs, desired, max_replicas);
  if (!size_needs_update && !annotations_need_update) return ScaleResult{false, rs};

  std::map<std::string, std::string> annotations;
  util::SetReplicasAnnotations(annotations, desired, max_replicas);
  Result<std::string> body = api::EncodeReplicaSetScale(*rs, new_scale, annotations);
  if (!body.ok()) return body.error();
  auto updated =
      replicasets_->Update(rs->metadata.namespace_, rs->metadata.name, std::move(body).value());
  if (!updated.ok()) return updated.error();
  RecordWrite(d, api::kReplicaSets.GroupResource(), (*updated)->metadata.resource_version);
  if (size_needs_update) {
    Eventf(d, "Normal", "ScalingReplicaSet",
           "Scaled " + operation + " replica set " + rs->metadata.name + " from " +
               std::to_string(rs->spec.replicas) + " to " + std::to_string(new_scale));
  }
  return ScaleResult{size_needs_update, *updated};
}

// A scaling event: an active RS's desired-replicas annotation differs from spec.replicas.
Result<bool> DeploymentController::IsScalingEvent(Deployment& d, const ReplicaSets& rss) {
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, false);
  if (!all.ok()) return all.error();
  ReplicaSets all_rss = all->old_rss;
  if (all->new_rs) all_rss.push_back(all->new_rs);
  for (const auto& rs : util::FilterActiveReplicaSets(all_rss)) {
    std::optional<int32_t> desired = util::GetDesiredReplicasAnnotation(*rs);
    if (desired && *desired != d.spec.replicas) return true;
  }
  return false;
}

// upstream cleanupDeployment: delete the lowest-revision old RSs beyond revisionHistoryLimit that
// are fully scaled down. An RS being deleted does not count, nor one this controller deleted
// that the cache still shows (deleted_rss_): deleting it again could only answer 404.
Status DeploymentController::CleanupDeployment(const ReplicaSets& old_rss, const Deployment& d) {
  if (!util::HasRevisionHistoryLimit(d)) return OkStatus();
  ReplicaSets cleanable;
  for (const auto& rs : old_rss) {
    if (rs && !rs->metadata.deletion_timestamp && !DeletedButStillCached(*rs)) {
      cleanable.push_back(rs);
    }
  }
  const int64_t diff = static_cast<int64_t>(cleanable.size()) - *d.spec.revision_history_limit;
  if (diff <= 0) return OkStatus();
  std::stable_sort(cleanable.begin(), cleanable.end(), controller::ReplicaSetsByRevision{});
  logger_.V(4).Info("Looking to cleanup old replica sets for deployment", "deployment",
                    klog::KRef(d.metadata.namespace_, d.metadata.name));
  for (int64_t i = 0; i < diff; ++i) {
    const auto& rs = cleanable[i];
    // Only RSs with nothing left and whose status has caught up with their spec.
    if (rs->status.replicas != 0 || rs->spec.replicas != 0 ||
        rs->metadata.generation > rs->status.observed_generation) {
      continue;
    }
    logger_.V(4).Info("Trying to cleanup replica set for deployment", "replicaSet",
                      klog::KRef(rs->metadata.namespace_, rs->metadata.name), "deployment",
                      klog::KRef(d.metadata.namespace_, d.metadata.name));
    Status s =
        replicasets_->Delete(rs->metadata.namespace_, rs->metadata.name, rs->metadata.uid.str());
    if (!s.ok() && !errors::IsNotFound(s.error())) return s;
    NoteDeleted(*rs);
  }
  return OkStatus();
}

Status DeploymentController::SyncDeploymentStatus(const ReplicaSets& all_rss,
                                                  const ReplicaSetPtr& new_rs, Deployment& d) {
  api::DeploymentStatus status = CalculateStatus(all_rss, new_rs, d);
  if (status == d.status) return OkStatus();
  d.status = std::move(status);
  return UpdateStatus(d);
}

Status DeploymentController::SyncStatusOnly(Deployment& d, const ReplicaSets& rss) {
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, false);
  if (!all.ok()) return all.error();
  ReplicaSets all_rss = all->old_rss;
  if (all->new_rs) all_rss.push_back(all->new_rs);
  return SyncDeploymentStatus(all_rss, all->new_rs, d);
}

// upstream calculateStatus.
api::DeploymentStatus DeploymentController::CalculateStatus(const ReplicaSets& all_rss,
                                                            const ReplicaSetPtr& new_rs,
                                                            const Deployment& d) const {
  const int32_t available = util::GetAvailableReplicaCountForReplicaSets(all_rss);
  const int32_t total = util::GetReplicaCountForReplicaSets(all_rss);
  api::DeploymentStatus s;
  s.observed_generation = d.metadata.generation;
  s.replicas = util::GetActualReplicaCountForReplicaSets(all_rss);
  s.updated_replicas = new_rs ? util::GetActualReplicaCountForReplicaSets({new_rs}) : 0;
  s.ready_replicas = util::GetReadyReplicaCountForReplicaSets(all_rss);
  s.available_replicas = available;
  // More available than desired (scaling down) is not negative unavailability.
  s.unavailable_replicas = std::max(0, total - available);
  s.terminating_replicas = util::GetTerminatingReplicaCountForReplicaSets(all_rss);
  s.collision_count = d.status.collision_count;
  s.conditions = d.status.conditions;
  if (available >= d.spec.replicas - util::MaxUnavailable(d)) {
    util::SetDeploymentCondition(
        s, util::NewDeploymentCondition(util::kConditionAvailable, "True",
                                        util::kMinimumReplicasAvailable,
                                        "Deployment has minimum availability.", Now()));
  } else {
    util::SetDeploymentCondition(
        s, util::NewDeploymentCondition(util::kConditionAvailable, "False",
                                        util::kMinimumReplicasUnavailable,
                                        "Deployment does not have minimum availability.", Now()));
  }
  return s;
}

}  // namespace kcm::deployment
