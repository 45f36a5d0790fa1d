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
#include "pkg/runtime/builder.h"
#include "pkg/runtime/handler.h"
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

bool IsReplicaSetRef(const api::OwnerReference& ref) {
  return ref.kind == std::string(api::kReplicaSets.kind) && ref.api_version.rfind("apps/", 0) == 0;
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
      track_terminating_(options_.track_terminating_replicas) {
  if (options_.stale_controller_consistency) {
    consistency_ =
        controller::InformerConsistency(options_.consistency_rv_getters,
                                        {{api::kReplicaSets.GroupResource(), rs_informer_.informer},
                                         {api::kPods.GroupResource(), pod_informer_.informer}});
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

ReplicaSetController::~ReplicaSetController() = default;

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
  runtime::ControllerOptions co;
  co.name = kControllerName;
  co.logger = logger_;
  co.max_concurrent_reconciles = options_.concurrent_replicaset_syncs;
  co.clock = &clock_;
  co.rate_limiter = options_.rate_limiter;
  co.max_retries = std::nullopt;  // upstream handleErr: no retry cap
  co.cache_sync_timeout = options_.cache_sync_timeout;
  runtime::TypedFuncs<api::ReplicaSet, std::vector<runtime::Enqueue>> rs_funcs;
  rs_funcs.create = std::bind_front(&ReplicaSetController::AddReplicaSet, this);
  rs_funcs.update = std::bind_front(&ReplicaSetController::UpdateReplicaSet, this);
  rs_funcs.del = std::bind_front(&ReplicaSetController::DeleteReplicaSet, this);
  runtime::TypedFuncs<api::Pod, std::vector<runtime::Enqueue>> pod_funcs;
  pod_funcs.create = std::bind_front(&ReplicaSetController::AddPod, this);
  pod_funcs.update = std::bind_front(&ReplicaSetController::UpdatePod, this);
  pod_funcs.del = std::bind_front(&ReplicaSetController::DeletePod, this);
  // Both watches go through the upstream handlers, which keep the expectations. This object
  // outlives the runtime controller: Run returns only after every worker finished.
  auto controller = runtime::NewControllerManagedBy(co)
                        .Watches(rs_informer_.informer,
                                 runtime::EnqueueRequestsFromTypedFuncs(std::move(rs_funcs)))
                        .Watches(pod_informer_.informer,
                                 runtime::EnqueueRequestsFromTypedFuncs(std::move(pod_funcs)))
                        .Complete(*this);
  if (!controller.ok()) return controller.error();
  logger_.Info("Starting controller", "controller", "replicaset", "workers",
               options_.concurrent_replicaset_syncs);
  // A sync skipped for a stale cache waits in the ConsistencyStore and comes back through this
  // controller's queue once the informers caught up (see Reconcile).
  if (consistency_) consistency_->SetReadySink((*controller)->Enqueuer());
  Status s = (*controller)->Start(stop);
  if (consistency_) consistency_->SetReadySink(nullptr);
  logger_.Info("Shutting down controller", "controller", "replicaset");
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
    logger_.V(2).Info("user error! more than one ReplicaSet is selecting pods with labels", "pod",
                      klog::KRef(pod.metadata.namespace_, pod.metadata.name), "replicaSets",
                      out.size());
  }
  return out;
}

std::vector<runtime::Enqueue> ReplicaSetController::AddReplicaSet(const ReplicaSetPtr& rs) {
  logger_.V(4).Info("Adding", "replicaSet", klog::KRef(rs->metadata.namespace_, rs->metadata.name));
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
    logger_.V(4).Info("Updated", "replicaSet",
                      klog::KRef(cur_rs->metadata.namespace_, cur_rs->metadata.name), "oldReplicas",
                      old_rs->spec.replicas, "newReplicas", cur_rs->spec.replicas);
  }
  // Always, so a resync re-syncs every ReplicaSet (upstream updateRS).
  out.push_back(runtime::RequestFor(*cur_rs));
  return out;
}

void ReplicaSetController::RecordPodWrite(std::string_view ns, const api::OwnerReference& owner,
                                          const std::string& resource_version) {
  if (!consistency_ || !IsReplicaSetRef(owner)) return;
  consistency_->WroteAt(runtime::Request{std::string(ns), owner.name}.Key(), owner.uid,
                        api::kPods.GroupResource(), resource_version);
}

std::vector<runtime::Enqueue> ReplicaSetController::DeleteReplicaSet(const ReplicaSetPtr& rs) {
  const std::string key = cache::MetaNamespaceKeyFunc(*rs);
  logger_.V(4).Info("Deleting", "replicaSet",
                    klog::KRef(rs->metadata.namespace_, rs->metadata.name));
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
    logger_.V(4).Info("Pod created", "pod",
                      klog::KRef(pod->metadata.namespace_, pod->metadata.name), "replicaSet", key);
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
  logger_.V(4).Info("Pod deleted", "pod", pod_key, "replicaSet", key);
  expectations_.DeletionObserved(key, pod_key);
  return {runtime::RequestFor(*rs)};
}

}  // namespace kcm::replicaset
