#include "controllers/replicaset/replica_set.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

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

// Pods by the UID of their controller, and orphans by namespace (upstream's controller UID
// index): a sync reads its own pods and the namespace's orphans instead of every pod there.
constexpr char kPodControllerUIDIndex[] = "controllerUID";

std::string OrphanIndexValue(const std::string& ns) {
  return "orphan:" + ns;
}

std::vector<std::string> PodControllerUIDIndexFunc(const api::Object& obj) {
  if (const api::OwnerReference* ref = obj.Meta().ControllerRef()) return {ref->uid};
  return {OrphanIndexValue(obj.Meta().namespace_)};
}

constexpr const char* kControllerApiVersion = "apps/v1";
constexpr const char* kControllerKind = "ReplicaSet";
// Pods in one slow-start batch and deletions run at most this many at once (the client's rate
// limiter is the real bound).
constexpr int kMaxConcurrentWrites = 64;

bool IsReplicaSetRef(const api::OwnerReference& ref) {
  return ref.kind == kControllerKind && ref.api_version.rfind("apps/", 0) == 0;
}

// Pods being deleted that have not finished (upstream FilterTerminatingPods).
bool IsPodTerminating(const api::Pod& pod) {
  return pod.metadata.deletion_timestamp.has_value() && pod.phase != api::PodPhase::kSucceeded &&
         pod.phase != api::PodPhase::kFailed;
}

// The selector of `rs`, or an error for a ReplicaSet we must not act on: a selector that does not
// parse, or a null/empty one (the API server refuses both for apps/v1; acting on them would claim
// nothing or everything).
Result<api::labels::Selector> SelectorOf(const api::ReplicaSet& rs) {
  if (!rs.spec.selector) return Error::Local("InvalidArgument", "spec.selector is null");
  Result<api::labels::Selector> selector = api::LabelSelectorAsSelector(&*rs.spec.selector);
  if (!selector.ok()) return selector.error();
  if (selector->Empty() || selector->IsNothing()) {
    return Error::Local("InvalidArgument", "spec.selector selects everything or nothing");
  }
  return selector;
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

bool ReplicaSetController::StillInCache(const api::ReplicaSet& rs) const {
  Result<ReplicaSetPtr> cached =
      rs_informer_.lister.ByNamespace(rs.metadata.namespace_).Get(rs.metadata.name);
  return cached.ok() && (*cached)->metadata.uid == rs.metadata.uid &&
         !(*cached)->metadata.deletion_timestamp;
}

ReplicaSetController::ReplicaSetController(
    informers::TypedInformer<api::ReplicaSet> rs_informer,
    informers::TypedInformer<api::Pod> pod_informer, std::shared_ptr<ReplicaSetClient> replicasets,
    std::shared_ptr<controller::PodControlInterface> pod_control,
    ReplicaSetControllerOptions options)
    : rs_informer_(std::move(rs_informer)),
      pod_informer_(std::move(pod_informer)),
      replicasets_(std::move(replicasets)),
      pod_control_(std::move(pod_control)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : RealClock::Get()),
      expectations_(clock_),
      track_terminating_(options_.track_terminating_replicas),
      write_pool_(std::max(options_.concurrent_replicaset_syncs, 1) * (kMaxConcurrentWrites - 1)) {
  if (options_.stale_controller_consistency) {
    std::map<std::string, controller::ConsistencyStore::LastSyncRVGetter> getters =
        options_.consistency_rv_getters;
    const bool informer_getters =
        getters.empty() && rs_informer_.informer && pod_informer_.informer;
    if (informer_getters) {
      getters[kReplicaSetsGroupResource] = [informer = rs_informer_.informer] {
        return informer->LastStoreSyncResourceVersion();
      };
      getters[kPodsGroupResource] = [informer = pod_informer_.informer] {
        return informer->LastStoreSyncResourceVersion();
      };
    }
    if (!getters.empty()) {
      consistency_ = std::make_shared<controller::ConsistencyStore>(std::move(getters));
    }
    if (informer_getters) {
      // Each move of either watermark may let waiting ReplicaSets sync.
      for (const auto& informer : {rs_informer_.informer, pod_informer_.informer}) {
        const uint64_t id = informer->AddStoreSyncListener(
            [weak = std::weak_ptr<controller::ConsistencyStore>(consistency_)] {
              if (auto store = weak.lock()) store->StoresAdvanced();
            });
        store_sync_listeners_.emplace_back(informer, id);
      }
    }
  }
  if (pod_informer_.informer) {
    // Shared informers: another controller may have added the index already.
    auto existing = pod_informer_.informer->GetIndexer()->GetIndexers();
    pod_uid_index_ =
        existing.contains(kPodControllerUIDIndex) ||
        pod_informer_.informer->AddIndexers({{kPodControllerUIDIndex, PodControllerUIDIndexFunc}})
            .ok();
  }
}

ReplicaSetController::~ReplicaSetController() {
  for (const auto& [informer, id] : store_sync_listeners_) informer->RemoveStoreSyncListener(id);
}

std::vector<PodPtr> ReplicaSetController::PodsControlledBy(const std::string& ns,
                                                           const std::string& uid) const {
  if (pod_uid_index_) {
    auto objs = pod_informer_.informer->GetIndexer()->ByIndex(
        kPodControllerUIDIndex, uid.empty() ? OrphanIndexValue(ns) : uid);
    if (objs.ok()) return informers::TypedNamespaceLister<api::Pod>::Cast(*objs);
  }
  std::vector<PodPtr> out;
  for (const auto& pod : pod_informer_.lister.ByNamespace(ns).List()) {
    const api::OwnerReference* ref = pod->metadata.ControllerRef();
    if ((ref == nullptr && uid.empty()) || (ref != nullptr && ref->uid == uid)) {
      out.push_back(pod);
    }
  }
  return out;
}

Status ReplicaSetController::Run(std::stop_token stop) {
  if (!rs_informer_.informer || !pod_informer_.informer) {
    return Error::Local("InvalidArgument", "replicaset controller: informers are required to run");
  }
  runtime::ControllerOptions co;
  co.name = kControllerName;
  co.max_concurrent_reconciles = options_.concurrent_replicaset_syncs;
  co.clock = &clock_;
  co.rate_limiter = options_.rate_limiter;
  co.max_retries = std::nullopt;  // upstream handleErr: no retry cap
  co.cache_sync_timeout = options_.cache_sync_timeout;
  // The runtime controller does not own its reconciler here: this object outlives it (Run
  // returns only after every worker finished).
  runtime::Controller controller(
      co, std::shared_ptr<runtime::Reconciler>(std::shared_ptr<void>(), this));

  runtime::TypedFuncs<api::ReplicaSet, std::vector<runtime::Enqueue>> rs_funcs;
  rs_funcs.create = std::bind_front(&ReplicaSetController::AddReplicaSet, this);
  rs_funcs.update = std::bind_front(&ReplicaSetController::UpdateReplicaSet, this);
  rs_funcs.del = std::bind_front(&ReplicaSetController::DeleteReplicaSet, this);
  runtime::TypedFuncs<api::Pod, std::vector<runtime::Enqueue>> pod_funcs;
  pod_funcs.create = std::bind_front(&ReplicaSetController::AddPod, this);
  pod_funcs.update = std::bind_front(&ReplicaSetController::UpdatePod, this);
  pod_funcs.del = std::bind_front(&ReplicaSetController::DeletePod, this);
  if (Status s = controller.Watch(
          std::make_shared<runtime::InformerSource>(rs_informer_.informer, &clock_),
          runtime::EnqueueRequestsFromTypedFuncs(std::move(rs_funcs)));
      !s.ok()) {
    return s;
  }
  if (Status s = controller.Watch(
          std::make_shared<runtime::InformerSource>(pod_informer_.informer, &clock_),
          runtime::EnqueueRequestsFromTypedFuncs(std::move(pod_funcs)));
      !s.ok()) {
    return s;
  }
  KLOG_INFOS("Starting controller", "controller", "replicaset", "workers",
             options_.concurrent_replicaset_syncs);
  // A sync skipped for a stale cache waits in the ConsistencyStore and comes back through this
  // controller's queue once the informers caught up (see Reconcile).
  if (consistency_) consistency_->SetReadySink(controller.Enqueuer());
  Status s = controller.Start(stop);
  if (consistency_) consistency_->SetReadySink(nullptr);
  KLOG_INFOS("Shutting down controller", "controller", "replicaset");
  return s;
}

// --- handlers (upstream addRS, updateRS, deleteRS, addPod, updatePod, deletePod) ---

ReplicaSetPtr ReplicaSetController::ResolveControllerRef(const std::string& ns,
                                                         const api::OwnerReference& ref) const {
  if (!IsReplicaSetRef(ref)) return nullptr;
  Result<ReplicaSetPtr> rs = rs_informer_.lister.ByNamespace(ns).Get(ref.name);
  if (!rs.ok()) return nullptr;
  // A ReplicaSet of the same name that is not the owner (deleted and recreated).
  if ((*rs)->metadata.uid != ref.uid) return nullptr;
  return *rs;
}

std::vector<ReplicaSetPtr> ReplicaSetController::GetPodReplicaSets(const api::Pod& pod) const {
  std::vector<ReplicaSetPtr> out;
  for (const auto& rs : rs_informer_.lister.ByNamespace(pod.metadata.namespace_).List()) {
    Result<api::labels::Selector> selector = SelectorOf(*rs);
    // A ReplicaSet with a bad, nil or empty selector matches nothing, not everything.
    if (!selector.ok() || !selector->Matches(pod.metadata.labels)) continue;
    out.push_back(rs);
  }
  if (out.size() > 1) {
    // The ReplicaSets' selectors overlap; the user must fix them, we just report it.
    KLOG_V_INFOS(2, "user error! more than one ReplicaSet is selecting pods with labels", "pod",
                 klog::KRef(pod.metadata.namespace_, pod.metadata.name), "replicaSets", out.size());
  }
  return out;
}

std::vector<runtime::Enqueue> ReplicaSetController::AddReplicaSet(const ReplicaSetPtr& rs) {
  VLOG(4) << "Adding ReplicaSet " << cache::MetaNamespaceKeyFunc(*rs);
  return {runtime::RequestFor(*rs)};
}

std::vector<runtime::Enqueue> ReplicaSetController::UpdateReplicaSet(const ReplicaSetPtr& old_rs,
                                                                     const ReplicaSetPtr& cur_rs) {
  std::vector<runtime::Enqueue> out;
  if (old_rs && old_rs->metadata.uid != cur_rs->metadata.uid) {
    // Deleted and recreated under the same name between two events: the old one's expectations
    // must go (upstream treats this as a delete of the old object).
    out = DeleteReplicaSet(old_rs);
  }
  if (old_rs && old_rs->spec.replicas != cur_rs->spec.replicas) {
    VLOG(4) << "ReplicaSet " << cache::MetaNamespaceKeyFunc(*cur_rs) << " updated: replicas "
            << old_rs->spec.replicas << "->" << cur_rs->spec.replicas;
  }
  // Always, so a resync re-syncs every ReplicaSet (upstream updateRS).
  out.push_back(runtime::RequestFor(*cur_rs));
  return out;
}

void ReplicaSetController::RecordPodWrite(std::string_view ns, const api::OwnerReference& owner,
                                          const std::string& resource_version) {
  if (!consistency_ || !IsReplicaSetRef(owner)) return;
  consistency_->WroteAt(runtime::Request{std::string(ns), owner.name}.Key(), owner.uid,
                        kPodsGroupResource, resource_version);
}

std::vector<runtime::Enqueue> ReplicaSetController::DeleteReplicaSet(const ReplicaSetPtr& rs) {
  const std::string key = cache::MetaNamespaceKeyFunc(*rs);
  VLOG(4) << "Deleting ReplicaSet " << key;
  if (consistency_) consistency_->Clear(key, rs->metadata.uid.str());
  expectations_.DeleteExpectations(key);
  return {runtime::RequestFor(*rs)};
}

std::vector<runtime::Enqueue> ReplicaSetController::AddPod(const PodPtr& pod) {
  if (pod->metadata.deletion_timestamp) {
    // On a restart the pod may be seen already terminating; it counts as a deletion (upstream
    // addPod).
    return DeletePod(pod);
  }
  if (const api::OwnerReference* ref = pod->metadata.ControllerRef()) {
    ReplicaSetPtr rs = ResolveControllerRef(pod->metadata.namespace_, *ref);
    if (!rs) return {};
    const std::string key = cache::MetaNamespaceKeyFunc(*rs);
    VLOG(4) << "Pod " << cache::MetaNamespaceKeyFunc(*pod) << " created for ReplicaSet " << key;
    expectations_.CreationObserved(key);
    return {runtime::RequestFor(*rs)};
  }
  // An orphan: wake every ReplicaSet that might adopt it.
  std::vector<runtime::Enqueue> out;
  for (const auto& rs : GetPodReplicaSets(*pod)) out.emplace_back(runtime::RequestFor(*rs));
  return out;
}

std::vector<runtime::Enqueue> ReplicaSetController::UpdatePod(const PodPtr& old_pod,
                                                              const PodPtr& cur_pod) {
  // Periodic resyncs send updates of an unchanged pod; nothing to do.
  if (cur_pod->metadata.resource_version == old_pod->metadata.resource_version) return {};
  const bool labels_changed = cur_pod->metadata.labels != old_pod->metadata.labels;
  std::vector<runtime::Enqueue> out;
  if (cur_pod->metadata.deletion_timestamp) {
    // Graceful deletion started: the kubelet will delete the pod later, but the ReplicaSet
    // should replace it now, so the deletion counts as observed at once.
    out = DeletePod(cur_pod);
    if (labels_changed) {
      for (auto& e : DeletePod(old_pod)) out.push_back(std::move(e));
    }
    return out;
  }
  const api::OwnerReference* cur_ref = cur_pod->metadata.ControllerRef();
  const api::OwnerReference* old_ref = old_pod->metadata.ControllerRef();
  const bool ref_changed =
      (cur_ref == nullptr) != (old_ref == nullptr) ||
      (cur_ref != nullptr &&
       (cur_ref->uid != old_ref->uid || cur_ref->name != old_ref->name ||
        cur_ref->kind != old_ref->kind || cur_ref->api_version != old_ref->api_version));
  if (ref_changed && old_ref != nullptr) {
    // The old owner must notice the pod is gone from it.
    if (ReplicaSetPtr rs = ResolveControllerRef(old_pod->metadata.namespace_, *old_ref)) {
      out.emplace_back(runtime::RequestFor(*rs));
    }
  }
  if (cur_ref != nullptr) {
    ReplicaSetPtr rs = ResolveControllerRef(cur_pod->metadata.namespace_, *cur_ref);
    if (!rs) return out;
    out.emplace_back(runtime::RequestFor(*rs));
    // A pod that just became Ready becomes available after minReadySeconds; sync then (one more
    // second against clock skew between us and the queue, as upstream).
    if (!controller::IsPodReady(*old_pod) && controller::IsPodReady(*cur_pod) &&
        rs->spec.min_ready_seconds > 0) {
      out.emplace_back(runtime::RequestFor(*rs),
                       std::chrono::seconds(rs->spec.min_ready_seconds) + std::chrono::seconds(1));
    }
    return out;
  }
  if (labels_changed || ref_changed) {
    for (const auto& rs : GetPodReplicaSets(*cur_pod)) out.emplace_back(runtime::RequestFor(*rs));
  }
  return out;
}

std::vector<runtime::Enqueue> ReplicaSetController::DeletePod(const PodPtr& pod) {
  const api::OwnerReference* ref = pod->metadata.ControllerRef();
  // An orphan's deletion concerns no ReplicaSet: none was counting on it.
  if (ref == nullptr) return {};
  ReplicaSetPtr rs = ResolveControllerRef(pod->metadata.namespace_, *ref);
  if (!rs) return {};
  const std::string key = cache::MetaNamespaceKeyFunc(*rs);
  const std::string pod_key = cache::MetaNamespaceKeyFunc(*pod);
  VLOG(4) << "Pod " << pod_key << " deleted (ReplicaSet " << key << ")";
  expectations_.DeletionObserved(key, pod_key);
  return {runtime::RequestFor(*rs)};
}

// --- sync ---

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
      kControllerKind, rs.metadata.uid);
  controller::ControllerRefManager manager(rs.metadata, kControllerApiVersion, kControllerKind,
                                           selector, std::move(can_adopt));
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
    KLOG_V_INFOS(2, "Too few replicas", "replicaSet",
                 klog::KRef(rs.metadata.namespace_, rs.metadata.name), "need", rs.spec.replicas,
                 "creating", count);
    const api::OwnerReference controller_ref =
        api::ControllerOwnerReference(kControllerApiVersion, kControllerKind, rs.metadata);
    controller::SlowStartResult result = controller::SlowStartBatch(
        count, 1,
        [&]() -> Status {
          // A ReplicaSet deleted while its slow start runs gets no more pods: they would only be
          // garbage for the collector (the cache lookup is cheap next to a POST).
          if (!StillInCache(rs)) return Error::Local(kReplicaSetGoneReason, key + " is gone");
          Status s = pod_control_->CreatePods(rs.metadata.namespace_, rs.spec.pod_template, rs,
                                              controller_ref);
          // The namespace is going away: nothing to create, and no point retrying.
          if (!s.ok() && errors::IsNamespaceTerminating(s.error())) return OkStatus();
          return s;
        },
        kMaxConcurrentWrites, stop, &write_pool_);
    // Creations that failed or were never attempted will never be observed: stop waiting for
    // them, or the ReplicaSet would be stuck until the expectations expire.
    if (const int skipped = count - result.successes; skipped > 0) {
      KLOG_V_INFOS(2, "Slow-start failure. Skipping creation of pods, decrementing expectations",
                   "podsSkipped", skipped, "kind", "ReplicaSet", "replicaSet",
                   klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      expectations_.LowerExpectations(key, skipped, 0);
    }
    if (!result.first_error.ok() && result.first_error.error().reason == kReplicaSetGoneReason) {
      KLOG_INFOS("ReplicaSet was deleted during scale-up; stopped creating pods", "replicaSet",
                 klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      return OkStatus();
    }
    return result.first_error;
  }
  if (diff > 0) {
    const int count = static_cast<int>(std::min<int64_t>(diff, options_.burst_replicas));
    KLOG_V_INFOS(2, "Too many replicas", "replicaSet",
                 klog::KRef(rs.metadata.namespace_, rs.metadata.name), "need", rs.spec.replicas,
                 "deleting", count);
    const std::vector<PodPtr> related = GetIndirectlyRelatedPods(rs);
    const std::vector<PodPtr> to_delete =
        controller::GetPodsToDelete(filtered_pods, related, count, clock_.WallNow());
    std::vector<std::string> pod_keys;
    pod_keys.reserve(to_delete.size());
    for (const auto& pod : to_delete) pod_keys.push_back(cache::MetaNamespaceKeyFunc(*pod));
    // The set of pod keys (upstream getPodKeys), so only the deletions we asked for lower the
    // count.
    expectations_.ExpectDeletions(key, pod_keys);

    std::mutex mu;
    Status first_error;
    controller::ParallelFor(
        static_cast<int>(to_delete.size()), kMaxConcurrentWrites,
        [&](int i) {
          const api::Pod& pod = *to_delete[i];
          if (stop.stop_requested()) {
            // Not asked for: its deletion will never be observed.
            expectations_.DeletionObserved(key, pod_keys[i]);
            std::lock_guard lock(mu);
            if (first_error.ok()) {
              first_error = errors::Canceled("pod deletes of " + key + " stopped: stop requested");
            }
            return;
          }
          Status s = pod_control_->DeletePod(rs.metadata.namespace_, pod.metadata.name, rs);
          if (s.ok()) return;
          // The deletion will not be observed (or already was, for NotFound): don't wait for it.
          KLOG_V_INFOS(2, "Failed to delete pod, decremented expectations", "pod", pod_keys[i],
                       "kind", "ReplicaSet", "replicaSet",
                       klog::KRef(rs.metadata.namespace_, rs.metadata.name));
          expectations_.DeletionObserved(key, pod_keys[i]);
          if (errors::IsNotFound(s.error())) return;
          std::lock_guard lock(mu);
          if (first_error.ok()) first_error = s;
        },
        &write_pool_);
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
        KLOG_V_INFOS(4, "Waiting for the informers to apply our last writes", "replicaSet",
                     klog::KRef(req.namespace_, req.name), "reason", stale->Message());
        return runtime::ReconcileResult{.awaiting_wake = true};
      }
      KLOG_INFOS("Requeueing: the informer has not caught up with our writes", "replicaSet",
                 klog::KRef(req.namespace_, req.name), "reason", stale->Message());
      return runtime::ReconcileResult{.requeue = true};
    }
  }
  Result<ReplicaSetPtr> got = rs_informer_.lister.ByNamespace(req.namespace_).Get(req.name);
  if (!got.ok()) {
    if (errors::IsNotFound(got.error())) {
      KLOG_V_INFOS(4, "ReplicaSet has been deleted", "replicaSet",
                   klog::KRef(req.namespace_, req.name));
      if (consistency_) consistency_->Clear(key, "");
      expectations_.DeleteExpectations(key);
      return runtime::ReconcileResult{};
    }
    return got.error();
  }
  ReplicaSetPtr rs = *got;

  const bool needs_sync = expectations_.SatisfiedExpectations(key);
  Result<api::labels::Selector> selector = SelectorOf(*rs);
  if (!selector.ok()) {
    // Bad input: retrying cannot fix it; the next update of the object brings it back.
    KLOG_ERRORS(selector.error().message, "Error converting pod selector to selector", "replicaSet",
                klog::KRef(req.namespace_, req.name));
    return runtime::ReconcileResult{};
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
    consistency_->WroteAt(key, rs->metadata.uid, kReplicaSetsGroupResource,
                          (*updated)->metadata.resource_version);
  }
  if (terminating && (*updated)->status.terminating_replicas == std::nullopt && *updated != rs) {
    // The API server dropped the field: it does not know it. Stop computing it, or every sync
    // would see a difference and write again.
    if (track_terminating_.exchange(false)) {
      LOG(INFO) << "The API server does not store ReplicaSet status.terminatingReplicas; "
                   "not tracking it";
    }
  }
  VLOG(4) << "Finished syncing ReplicaSet " << key << " ("
          << std::chrono::duration<double, std::milli>(clock_.Now() - start).count() << " ms)";
  if (!manage_status.ok()) return manage_status.error();

  // Come back when the next Ready pod has been Ready for minReadySeconds.
  runtime::ReconcileResult result;
  if (std::optional<Clock::duration> next =
          NextAvailabilityCheck(filtered_pods, (*updated)->spec.min_ready_seconds, now)) {
    result.requeue_after = *next;
  }
  return result;
}

}  // namespace kcm::replicaset
