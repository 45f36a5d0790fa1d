// The ReplicaSet controller's sync (upstream syncReplicaSet, manageReplicas, claimPods): the
// Reconcile side; replica_set.cc holds construction, Run and the event handlers.
#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <set>

#include "controllers/replicaset/replica_set.h"
#include "controllers/replicaset/replica_set_utils.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/object_builders.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/controller_ref_manager.h"
#include "pkg/controller/pods_to_delete.h"
#include "pkg/controller/slow_start.h"
#include "pkg/metrics/metrics.h"
#include "pkg/runtime/handler.h"
#include "pkg/runtime/informer_source.h"
#include "pkg/util/klog.h"

namespace kcm::replicaset {
namespace {

// Pods being deleted that have not finished (upstream FilterTerminatingPods).
bool IsPodTerminating(const api::Pod& pod) {
  return pod.metadata.deletion_timestamp.has_value() && pod.phase != api::PodPhase::kSucceeded &&
         pod.phase != api::PodPhase::kFailed;
}

constexpr const char* kReplicaSetGoneReason = "ReplicaSetGone";

// Upstream replicaset_controller_stale_sync_skips_total{group, resource}.
metrics::Counter StaleSyncSkips(const std::string& group_resource) {
  static const metrics::CounterVec vec(
      "replicaset_controller_stale_sync_skips_total",
      "Total number of ReplicaSet syncs skipped due to a stale watch cache.",
      {"group", "resource"});
  const size_t dot = group_resource.find('.');
  if (dot == std::string::npos) return vec.With({"", group_resource});
  return vec.With({group_resource.substr(dot + 1), group_resource.substr(0, dot)});
}

}  // namespace

Result<std::vector<PodPtr>> ReplicaSetController::ClaimPods(const api::ReplicaSet& rs,
                                                            const api::labels::Selector& selector,
                                                            const std::vector<PodPtr>& pods) {
  // Before the first adoption, check with an uncached GET that the ReplicaSet is still the
  // same object and not being deleted.
  auto can_adopt = controller::RecheckDeletionTimestamp(
      [this, ns = rs.metadata.namespace_, name = rs.metadata.name]() -> Result<api::ObjectMeta> {
        Result<ReplicaSetPtr> fresh = replicasets_->Get(ns, name);
        if (!fresh.ok()) return fresh.error();
        return (*fresh)->metadata;
      },
      std::string(api::kReplicaSets.kind), rs.metadata.uid);
  controller::ControllerRefManager manager(rs.metadata, api::kReplicaSets.ApiVersion(),
                                           std::string(api::kReplicaSets.kind), selector,
                                           std::move(can_adopt));
  controller::ClaimResult<api::Pod> result =
      manager.ClaimObjects(pods, controller::PodPatcher(*pod_control_));
  if (!result.status.ok()) return result.status.error();
  return std::move(result.claimed);
}

std::vector<PodPtr> ReplicaSetController::GetIndirectlyRelatedPods(
    const api::ReplicaSet& rs) const {
  // The ReplicaSets controlled by the same owner (a Deployment's old and new ReplicaSets); just
  // this one when it has no controller.
  std::set<std::string> rs_uids = {rs.metadata.uid};
  if (const api::OwnerReference* owner = rs.metadata.ControllerRef()) {
    for (const auto& other : rs_informer_.lister.ByNamespace(rs.metadata.namespace_).List()) {
      const api::OwnerReference* other_owner = other->metadata.ControllerRef();
      if (other_owner != nullptr && other_owner->uid == owner->uid) {
        rs_uids.insert(other->metadata.uid);
      }
    }
  }
  std::vector<PodPtr> related;
  for (const std::string& uid : rs_uids) {
    for (auto& pod : PodsControlledBy(rs.metadata.namespace_, uid))
      related.push_back(std::move(pod));
  }
  return related;
}

Status ReplicaSetController::ManageReplicas(const std::vector<PodPtr>& filtered_pods,
                                            const api::ReplicaSet& rs, std::stop_token stop) {
  const std::string key = cache::MetaNamespaceKeyFunc(rs);
  int64_t diff = static_cast<int64_t>(filtered_pods.size()) - rs.spec.replicas;
  if (diff < 0) {
    const int count = static_cast<int>(std::min<int64_t>(-diff, options_.burst_replicas));
    // Expect every create before the first one, so that its watch event, which may arrive
    // before CreatePods returns, is counted.
    expectations_.ExpectCreations(key, count);
    logger_.V(2).Info("Too few replicas", "replicaSet",
                      klog::KRef(rs.metadata.namespace_, rs.metadata.name), "need",
                      rs.spec.replicas, "creating", count);
    const api::OwnerReference controller_ref = api::ControllerOwnerReference(
        api::kReplicaSets.ApiVersion(), std::string(api::kReplicaSets.kind), rs.metadata);
    // Each batch's creates are sent at once from this worker thread (requests in flight on the
    // client's loop); its events, logs and the namespace check run here once it ended.
    controller::SlowStartResult result = controller::SlowStartBatch(
        count, 1,
        [&](int size) -> std::vector<controller::WriteOutcome> {
          // A ReplicaSet deleted while its slow start runs gets no more pods: they would only be
          // garbage for the collector (the cache lookup is cheap next to a POST).
          if (!StillInCache(rs)) {
            return std::vector<controller::WriteOutcome>(
                static_cast<size_t>(size),
                controller::WriteOutcome{Error::Local(kReplicaSetGoneReason, key + " is gone")});
          }
          std::vector<controller::WriteOutcome> outcomes = pod_control_->CreatePodsBatch(
              rs.metadata.namespace_, rs.spec.pod_template, rs, controller_ref, size, stop);
          for (controller::WriteOutcome& o : outcomes) {
            // The namespace is going away: nothing to create, and no point retrying.
            if (!o.skipped && !o.status.ok() && errors::IsNamespaceTerminating(o.status.error())) {
              o.status = OkStatus();
            }
          }
          return outcomes;
        },
        stop);
    // Creations that failed or were never attempted will never be observed: stop waiting for
    // them, or the ReplicaSet would be stuck until the expectations expire.
    if (const int skipped = count - result.successes; skipped > 0) {
      logger_.V(2).Info("Slow-start failure. Skipping creation of pods, decrementing expectations",
                        "podsSkipped", skipped, "kind", api::kReplicaSets.kind, "replicaSet",
                        klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      expectations_.LowerExpectations(key, skipped, 0);
    }
    if (!result.first_error.ok() && result.first_error.error().reason == kReplicaSetGoneReason) {
      logger_.Info("ReplicaSet was deleted during scale-up; stopped creating pods", "replicaSet",
                   klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      return OkStatus();
    }
    return result.first_error;
  }
  if (diff > 0) {
    const int count = static_cast<int>(std::min<int64_t>(diff, options_.burst_replicas));
    logger_.V(2).Info("Too many replicas", "replicaSet",
                      klog::KRef(rs.metadata.namespace_, rs.metadata.name), "need",
                      rs.spec.replicas, "deleting", count);
    const std::vector<PodPtr> related = GetIndirectlyRelatedPods(rs);
    const std::vector<PodPtr> to_delete =
        controller::GetPodsToDelete(filtered_pods, related, count, clock_.WallNow());
    std::vector<std::string> pod_keys;
    pod_keys.reserve(to_delete.size());
    for (const auto& pod : to_delete) pod_keys.push_back(cache::MetaNamespaceKeyFunc(*pod));
    // The set of pod keys (upstream getPodKeys), so only the deletions we asked for lower the
    // count.
    expectations_.ExpectDeletions(key, pod_keys);

    // One batch of every delete, sent at once from this worker thread; each outcome is handled
    // here once all ended.
    std::vector<std::string> names;
    names.reserve(to_delete.size());
    for (const auto& pod : to_delete) names.push_back(pod->metadata.name);
    const std::vector<controller::WriteOutcome> outcomes =
        pod_control_->DeletePodsBatch(rs.metadata.namespace_, names, rs, stop);
    Status first_error;
    for (size_t i = 0; i < outcomes.size() && i < pod_keys.size(); ++i) {
      const controller::WriteOutcome& o = outcomes[i];
      if (o.skipped) {
        // Not asked for: its deletion will never be observed.
        expectations_.DeletionObserved(key, pod_keys[i]);
        if (first_error.ok()) {
          first_error = errors::Canceled("pod deletes of " + key + " stopped: stop requested");
        }
        continue;
      }
      if (o.status.ok()) continue;
      // The deletion will not be observed (or already was, for NotFound): don't wait for it.
      logger_.V(2).Info("Failed to delete pod, decremented expectations", "pod", pod_keys[i],
                        "kind", api::kReplicaSets.kind, "replicaSet",
                        klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      expectations_.DeletionObserved(key, pod_keys[i]);
      if (errors::IsNotFound(o.status.error())) continue;
      if (first_error.ok()) first_error = o.status;
    }
    return first_error;
  }
  return OkStatus();
}

Result<runtime::ReconcileResult> ReplicaSetController::Reconcile(const runtime::Request& req,
                                                                 std::stop_token stop) {
  const auto start = clock_.Now();
  const std::string key = req.Key();
  // Read-your-own-writes (upstream syncReplicaSet under StaleControllerConsistencyReplicaSet):
  // until the informers have applied what the previous sync wrote, the cache would show the
  // ReplicaSet or its pods as they were before it, and this sync would act on that (create pods
  // already created, write a status already superseded). Upstream returns an error, i.e. comes
  // back after the per-item exponential backoff, which grows with every skip until a sync
  // succeeds: under a steady stream of events a key could sleep for seconds after its informer
  // caught up. Here the ConsistencyStore puts the key back on the queue the moment the
  // informers' watermarks pass our writes (Run sets the sink); only without a sink (Reconcile
  // called directly) is it requeued rate-limited.
  if (consistency_) {
    if (std::optional<controller::ConsistencyError> stale =
            consistency_->EnsureReady(key, /*wait=*/true)) {
      StaleSyncSkips(stale->group_resource).Inc();
      if (stale->waiting) {
        logger_.V(4).Info("Waiting for the informers to apply our last writes", "replicaSet",
                          klog::KRef(req.namespace_, req.name), "reason", stale->Message());
        return runtime::AwaitWake();
      }
      logger_.Info("Requeueing: the informer has not caught up with our writes", "replicaSet",
                   klog::KRef(req.namespace_, req.name), "reason", stale->Message());
      return runtime::RequeueRateLimited();
    }
  }
  Result<ReplicaSetPtr> got = rs_informer_.lister.ByNamespace(req.namespace_).Get(req.name);
  if (!got.ok()) {
    if (errors::IsNotFound(got.error())) {
      logger_.V(4).Info("ReplicaSet has been deleted", "replicaSet",
                        klog::KRef(req.namespace_, req.name));
      if (consistency_) consistency_->Clear(key, "");
      expectations_.DeleteExpectations(key);
      return runtime::Done();
    }
    return got.error();
  }
  ReplicaSetPtr rs = *got;

  const bool needs_sync = expectations_.SatisfiedExpectations(key);
  Result<api::labels::Selector> selector = SelectorOf(*rs);
  if (!selector.ok()) {
    // Bad input: retrying cannot fix it; the next update of the object brings it back.
    logger_.Error(selector.error().message, "Error converting pod selector to selector",
                  "replicaSet", klog::KRef(req.namespace_, req.name));
    return runtime::Done();
  }

  // Our pods (also those that stopped matching, to release them) and the namespace's orphans
  // (to adopt them): pods controlled by anyone else are never claimed.
  std::vector<PodPtr> all_pods = PodsControlledBy(req.namespace_, rs->metadata.uid);
  for (auto& pod : PodsControlledBy(req.namespace_, "")) all_pods.push_back(std::move(pod));
  // Only active pods count (and are adopted): upstream FilterActivePods.
  const std::vector<PodPtr> active = controller::FilterActivePods(all_pods);
  Result<std::vector<PodPtr>> claimed = ClaimPods(*rs, *selector, active);
  if (!claimed.ok()) return claimed.error();
  const std::vector<PodPtr>& filtered_pods = *claimed;

  std::optional<int32_t> terminating;
  if (track_terminating_) {
    int32_t n = 0;
    for (const auto& pod : all_pods) {
      const api::OwnerReference* ref = pod->metadata.ControllerRef();
      if (IsPodTerminating(*pod) && ref != nullptr && ref->uid == rs->metadata.uid &&
          selector->Matches(pod->metadata.labels)) {
        ++n;
      }
    }
    terminating = n;
  }

  Status manage_status;
  if (needs_sync && !rs->metadata.deletion_timestamp) {
    manage_status = ManageReplicas(filtered_pods, *rs, stop);
  }
  if (stop.stop_requested()) {
    // No status write after the stop: another leader may be writing it already.
    return errors::Canceled("sync of ReplicaSet " + key + " stopped before its status write");
  }

  const api::Time now = clock_.WallNow();
  api::ReplicaSetStatus new_status =
      CalculateStatus(*rs, {&filtered_pods, terminating, &manage_status, now});
  Result<ReplicaSetPtr> updated = UpdateReplicaSetStatus(*replicasets_, rs, new_status);
  if (!updated.ok()) {
    // Requeue (rate-limited); manageReplicas will not repeat itself before the pods it asked for
    // are observed.
    return updated.error();
  }
  if (consistency_) {
    consistency_->WroteAt(key, rs->metadata.uid, api::kReplicaSets.GroupResource(),
                          (*updated)->metadata.resource_version);
  }
  if (terminating && (*updated)->status.terminating_replicas == std::nullopt && *updated != rs) {
    // The API server dropped the field: it does not know it. Stop computing it, or every sync
    // would see a difference and write again.
    if (track_terminating_.exchange(false)) {
      logger_.Info(
          "The API server does not store ReplicaSet status.terminatingReplicas; not tracking it");
    }
  }
  logger_.V(4).Info("Finished syncing", "kind", api::kReplicaSets.kind, "key", key, "duration",
                    clock_.Now() - start);
  if (!manage_status.ok()) return manage_status.error();

  // Come back when the next Ready pod has been Ready for minReadySeconds.
  if (std::optional<Clock::duration> next =
          NextAvailabilityCheck(filtered_pods, (*updated)->spec.min_ready_seconds, now)) {
    return runtime::RequeueAfter(*next);
  }
  return runtime::Done();
}

}  // namespace kcm::replicaset
