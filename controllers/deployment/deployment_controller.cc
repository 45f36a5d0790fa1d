// The controller's wiring and syncDeployment (upstream deployment_controller.go).
#include "controllers/deployment/deployment_controller.h"

#include <glog/logging.h>

#include "pkg/api/label_selector.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/controller_ref_manager.h"
#include "pkg/metrics/metrics.h"
#include "pkg/record/reference.h"
#include "pkg/runtime/builder.h"
#include "pkg/runtime/controller.h"
#include "pkg/runtime/handler.h"
#include "pkg/util/klog.h"

namespace kcm::deployment {

namespace {

Result<api::labels::Selector> SelectorOf(const api::Deployment& d) {
  return api::LabelSelectorAsSelector(d.spec.selector ? &*d.spec.selector : nullptr);
}

// ReplicaSets by the UID of their controller, and orphans by namespace: a sync claims from its
// own ReplicaSets and the namespace's orphans instead of every ReplicaSet there (the only ones
// ControllerRefManager::ClaimObjects acts on; it ignores those controlled by others). Listing the
// namespace per sync made the syncs quadratic with many Deployments in one namespace.
constexpr char kReplicaSetControllerUIDIndex[] = "controllerUID";

std::string OrphanIndexValue(const std::string& ns) {
  return "orphan:" + ns;
}

std::vector<std::string> ReplicaSetControllerUIDIndexFunc(const api::Object& obj) {
  if (const api::OwnerReference* ref = obj.Meta().ControllerRef()) return {ref->uid};
  return {OrphanIndexValue(obj.Meta().namespace_)};
}

// A step that only writes: done when it succeeded, nothing to come back for.
Result<runtime::ReconcileResult> DoneUnlessFailed(const Status& s) {
  if (!s.ok()) return s.error();
  return runtime::Done();
}

// Syncs that waited for the informers to apply this controller's own writes, by the group resource
// found behind (our counterpart of upstream's replicaset_controller_stale_sync_skips_total).
metrics::Counter StaleSyncSkips(const std::string& group_resource) {
  static const metrics::CounterVec vec(
      "deployment_controller_stale_sync_skips_total",
      "Total number of Deployment syncs deferred until the informers applied the controller's "
      "own writes.",
      {"group", "resource"});
  const size_t dot = group_resource.find('.');
  if (dot == std::string::npos) return vec.With({"", group_resource});
  return vec.With({group_resource.substr(dot + 1), group_resource.substr(0, dot)});
}

bool SameControllerRef(const api::OwnerReference* a, const api::OwnerReference* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->api_version == b->api_version && a->kind == b->kind && a->name == b->name &&
         a->uid == b->uid && a->controller == b->controller &&
         a->block_owner_deletion == b->block_owner_deletion;
}

}  // namespace

DeploymentController::DeploymentController(
    informers::TypedInformer<api::Deployment> d_informer,
    informers::TypedInformer<api::ReplicaSet> rs_informer,
    informers::TypedInformer<api::Pod> pod_informer,
    std::shared_ptr<controller::DeploymentClient> deployments,
    std::shared_ptr<controller::ReplicaSetClient> replicasets,
    std::shared_ptr<record::EventRecorder> recorder, DeploymentControllerOptions options)
    : d_informer_(std::move(d_informer)),
      rs_informer_(std::move(rs_informer)),
      pod_informer_(std::move(pod_informer)),
      deployments_(std::move(deployments)),
      replicasets_(std::move(replicasets)),
      recorder_(std::move(recorder)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::Get()) {
  if (rs_informer_.informer) {
    // Shared informers: the index may be there already (another controller, a second instance).
    auto existing = rs_informer_.informer->GetIndexer()->GetIndexers();
    rs_uid_index_ =
        existing.contains(kReplicaSetControllerUIDIndex) ||
        rs_informer_.informer
            ->AddIndexers({{kReplicaSetControllerUIDIndex, ReplicaSetControllerUIDIndexFunc}})
            .ok();
  }
  if (!options_.read_your_writes) return;
  consistency_ =
      controller::InformerConsistency(options_.consistency_rv_getters,
                                      {{api::kDeployments.GroupResource(), d_informer_.informer},
                                       {api::kReplicaSets.GroupResource(), rs_informer_.informer}});
}

void DeploymentController::RecordWrite(const Deployment& d, const std::string& group_resource,
                                       const std::string& resource_version) {
  if (!consistency_) return;
  consistency_->WroteAt(cache::MetaNamespaceKeyFunc(d), d.metadata.uid, group_resource,
                        resource_version);
}

void DeploymentController::NoteDeleted(const api::ReplicaSet& rs) {
  {
    std::lock_guard lock(deleted_rss_mu_);
    deleted_rss_.insert(rs.metadata.uid);
  }
  // The store is updated before the handlers run: if it no longer holds this ReplicaSet, its
  // delete event has been (or is being) handled and would not erase an entry made after it.
  auto cached = rs_informer_.lister.ByNamespace(rs.metadata.namespace_).Get(rs.metadata.name);
  if (!cached.ok() || (*cached)->metadata.uid != rs.metadata.uid) {
    std::lock_guard lock(deleted_rss_mu_);
    deleted_rss_.erase(rs.metadata.uid);
  }
}

bool DeploymentController::DeletedButStillCached(const api::ReplicaSet& rs) const {
  std::lock_guard lock(deleted_rss_mu_);
  return deleted_rss_.contains(rs.metadata.uid);
}

DeploymentController::~DeploymentController() = default;

Status DeploymentController::Run(std::stop_token stop) {
  runtime::ControllerOptions opts;
  opts.name = kControllerName;
  opts.logger = logger_;
  opts.max_concurrent_reconciles = options_.concurrent_deployment_syncs;
  opts.clock = &clock_;
  opts.max_retries = kMaxRetries;
  opts.cache_sync_timeout = options_.cache_sync_timeout;
  // ReplicaSet events wake their Deployment by owner or, for orphans, every matching one
  // (upstream addReplicaSet, updateReplicaSet, deleteReplicaSet); a pod delete wakes a Recreate
  // Deployment once no pods remain (deletePod).
  runtime::TypedFuncs<api::ReplicaSet> rs_funcs;
  rs_funcs.create = [this](const ReplicaSetPtr& rs) { return OnReplicaSetAdd(*rs); };
  rs_funcs.update = [this](const ReplicaSetPtr& old_rs, const ReplicaSetPtr& cur_rs) {
    return OnReplicaSetUpdate(*old_rs, *cur_rs);
  };
  rs_funcs.del = [this](const ReplicaSetPtr& rs) { return OnReplicaSetDelete(*rs); };
  runtime::TypedFuncs<api::Pod> pod_funcs;
  pod_funcs.del = [this](const PodPtr& pod) { return OnPodDelete(*pod); };
  // Every Deployment add/update/delete syncs it (upstream addDeployment, updateDeployment,
  // deleteDeployment). This object outlives the runtime controller: Run returns only after every
  // worker finished.
  auto controller = runtime::NewControllerManagedBy(opts)
                        .For(d_informer_.informer)
                        .Watches(rs_informer_.informer,
                                 runtime::EnqueueRequestsFromTypedFuncs(std::move(rs_funcs)))
                        .Watches(pod_informer_.informer,
                                 runtime::EnqueueRequestsFromTypedFuncs(std::move(pod_funcs)))
                        .Complete(*this);
  if (!controller.ok()) return controller.error();
  logger_.Info("Starting controller", "controller", "deployment", "workers",
               options_.concurrent_deployment_syncs);
  // A sync skipped for a stale cache waits in the ConsistencyStore and comes back through this
  // controller's queue once the informers caught up (see SyncDeployment).
  if (consistency_) consistency_->SetReadySink((*controller)->Enqueuer());
  Status s = (*controller)->Start(stop);
  if (consistency_) consistency_->SetReadySink(nullptr);
  logger_.Info("Shutting down controller", "controller", "deployment");
  return s;
}

Result<runtime::ReconcileResult> DeploymentController::Reconcile(const runtime::Request& request,
                                                                 std::stop_token) {
  Result<runtime::ReconcileResult> r = SyncDeployment(request.namespace_, request.name);
  if (!r.ok()) {
    logger_.V(2).Info("Error syncing deployment", "deployment",
                      klog::KRef(request.namespace_, request.name), "err", r.error().ToString());
  }
  return HandleErr(std::move(r));
}

Result<runtime::ReconcileResult> DeploymentController::HandleErr(
    Result<runtime::ReconcileResult> sync_result) {
  if (!sync_result.ok() && errors::IsNamespaceTerminating(sync_result.error())) {
    return runtime::Done();
  }
  return sync_result;
}

// --- handlers ----------------------------------------------------------------------------------

DeploymentPtr DeploymentController::ResolveControllerRef(const std::string& ns,
                                                         const api::OwnerReference& ref) const {
  // A controllerRef of another kind is not ours to follow.
  if (ref.kind != api::kDeployments.kind || ref.api_version.rfind("apps/", 0) != 0) return nullptr;
  auto d = d_informer_.lister.ByNamespace(ns).Get(ref.name);
  if (!d.ok() || (*d)->metadata.uid != ref.uid) return nullptr;  // gone, or recreated
  return *d;
}

std::vector<DeploymentPtr> DeploymentController::GetDeploymentsForReplicaSet(
    const api::ReplicaSet& rs) const {
  std::vector<DeploymentPtr> out;
  if (rs.metadata.labels.empty()) return out;
  for (const auto& d : d_informer_.lister.ByNamespace(rs.metadata.namespace_).List()) {
    Result<api::labels::Selector> selector = SelectorOf(*d);
    // A nil or empty selector matches nothing here, never everything.
    if (!selector.ok() || selector->Empty() || selector->IsNothing()) continue;
    if (selector->Matches(rs.metadata.labels)) out.push_back(d);
  }
  if (out.size() > 1) {
    logger_.V(2).Info("More than one deployment is selecting replica set", "replicaSet",
                      klog::KRef(rs.metadata.namespace_, rs.metadata.name));
  }
  return out;
}

std::vector<runtime::Request> DeploymentController::OnReplicaSetAdd(
    const api::ReplicaSet& rs) const {
  if (rs.metadata.deletion_timestamp) {
    // Seen for the first time already being deleted (e.g. after a restart).
    return OnReplicaSetDelete(rs);
  }
  if (const api::OwnerReference* ref = rs.metadata.ControllerRef()) {
    if (DeploymentPtr d = ResolveControllerRef(rs.metadata.namespace_, *ref)) {
      logger_.V(4).Info("ReplicaSet added", "replicaSet",
                        klog::KRef(rs.metadata.namespace_, rs.metadata.name));
      return {runtime::RequestFor(*d)};
    }
    return {};
  }
  // An orphan: every matching Deployment may want to adopt it.
  std::vector<runtime::Request> out;
  for (const auto& d : GetDeploymentsForReplicaSet(rs)) out.push_back(runtime::RequestFor(*d));
  return out;
}

std::vector<runtime::Request> DeploymentController::OnReplicaSetUpdate(
    const api::ReplicaSet& old_rs, const api::ReplicaSet& cur_rs) const {
  // Periodic resyncs send unchanged objects; the Deployment resyncs on its own.
  if (cur_rs.metadata.resource_version == old_rs.metadata.resource_version) return {};
  std::vector<runtime::Request> out;
  const api::OwnerReference* cur_ref = cur_rs.metadata.ControllerRef();
  const api::OwnerReference* old_ref = old_rs.metadata.ControllerRef();
  const bool ref_changed = !SameControllerRef(cur_ref, old_ref);
  if (ref_changed && old_ref != nullptr) {
    if (DeploymentPtr d = ResolveControllerRef(old_rs.metadata.namespace_, *old_ref)) {
      out.push_back(runtime::RequestFor(*d));
    }
  }
  if (cur_ref != nullptr) {
    if (DeploymentPtr d = ResolveControllerRef(cur_rs.metadata.namespace_, *cur_ref)) {
      out.push_back(runtime::RequestFor(*d));
    }
    return out;
  }
  if (ref_changed || cur_rs.metadata.labels != old_rs.metadata.labels) {
    for (const auto& d : GetDeploymentsForReplicaSet(cur_rs)) {
      out.push_back(runtime::RequestFor(*d));
    }
  }
  return out;
}

std::vector<runtime::Request> DeploymentController::OnReplicaSetDelete(
    const api::ReplicaSet& rs) const {
  {
    std::lock_guard lock(deleted_rss_mu_);
    deleted_rss_.erase(rs.metadata.uid);
  }
  const api::OwnerReference* ref = rs.metadata.ControllerRef();
  if (ref == nullptr) return {};  // an orphan going away concerns nobody
  if (DeploymentPtr d = ResolveControllerRef(rs.metadata.namespace_, *ref)) {
    logger_.V(4).Info("ReplicaSet deleted", "replicaSet",
                      klog::KRef(rs.metadata.namespace_, rs.metadata.name));
    return {runtime::RequestFor(*d)};
  }
  return {};
}

DeploymentPtr DeploymentController::GetDeploymentForPod(const api::Pod& pod) const {
  const api::OwnerReference* ref = pod.metadata.ControllerRef();
  if (ref == nullptr || ref->kind != api::kReplicaSets.kind) return nullptr;
  auto rs = rs_informer_.lister.ByNamespace(pod.metadata.namespace_).Get(ref->name);
  if (!rs.ok() || (*rs)->metadata.uid != ref->uid) return nullptr;
  const api::OwnerReference* rs_ref = (*rs)->metadata.ControllerRef();
  if (rs_ref == nullptr) return nullptr;
  return ResolveControllerRef((*rs)->metadata.namespace_, *rs_ref);
}

std::vector<runtime::Request> DeploymentController::OnPodDelete(const api::Pod& pod) const {
  DeploymentPtr d = GetDeploymentForPod(pod);
  // Only Recreate waits for old pods to be gone (upstream deletePod).
  if (!d || d->spec.strategy.type != "Recreate") return {};
  ReplicaSets owned;
  for (const auto& rs : rs_informer_.lister.ByNamespace(d->metadata.namespace_).List()) {
    const api::OwnerReference* ref = rs->metadata.ControllerRef();
    if (ref != nullptr && ref->uid == d->metadata.uid) owned.push_back(rs);
  }
  size_t pods = 0;
  for (const auto& [uid, list] : GetPodMapForDeployment(*d, owned)) pods += list.size();
  if (pods == 0) return {runtime::RequestFor(*d)};
  return {};
}

void DeploymentController::Eventf(const Deployment& d, std::string_view type,
                                  std::string_view reason, const std::string& message) {
  recorder_->Event(record::GetReference(d, api::kDeployments.kind, api::kDeployments.ApiVersion()),
                   type, reason, message);
}

// --- syncDeployment ---------------------------------------------------------------------------

Result<ReplicaSets> DeploymentController::GetReplicaSetsForDeployment(const Deployment& d) {
  Result<api::labels::Selector> selector = SelectorOf(d);
  if (!selector.ok()) {
    return runtime::TerminalError("deployment " + cache::MetaNamespaceKeyFunc(d) +
                                  " has invalid label selector: " + selector.error().message);
  }
  const std::string ns = d.metadata.namespace_;
  const std::string name = d.metadata.name;
  controller::CanAdoptFunc can_adopt = controller::RecheckDeletionTimestamp(
      [this, ns, name]() -> Result<api::ObjectMeta> {
        auto fresh = deployments_->Get(ns, name);
        if (!fresh.ok()) return fresh.error();
        return (*fresh)->metadata;
      },
      std::string(api::kDeployments.kind), d.metadata.uid);
  controller::ControllerRefManager manager(d.metadata, api::kDeployments.ApiVersion(),
                                           std::string(api::kDeployments.kind), *selector,
                                           std::move(can_adopt));
  auto claimed = manager.ClaimObjects(ReplicaSetsToClaim(ns, d.metadata.uid),
                                      controller::ReplicaSetPatcher(*replicasets_));
  if (!claimed.status.ok()) return claimed.status.error();
  return std::move(claimed.claimed);
}

ReplicaSets DeploymentController::ReplicaSetsToClaim(const std::string& ns,
                                                     const std::string& uid) const {
  if (rs_uid_index_) {
    const auto& indexer = rs_informer_.informer->GetIndexer();
    auto own = indexer->ByIndex(kReplicaSetControllerUIDIndex, uid);
    auto orphans = indexer->ByIndex(kReplicaSetControllerUIDIndex, OrphanIndexValue(ns));
    if (own.ok() && orphans.ok()) {
      ReplicaSets out = informers::TypedNamespaceLister<api::ReplicaSet>::Cast(*own);
      // A UID is unique across namespaces, but an object of another namespace naming it as its
      // controller is not ours (as the namespace listing never saw it).
      std::erase_if(out, [&](const ReplicaSetPtr& rs) { return rs->metadata.namespace_ != ns; });
      for (auto& rs : informers::TypedNamespaceLister<api::ReplicaSet>::Cast(*orphans)) {
        out.push_back(std::move(rs));
      }
      return out;
    }
  }
  return rs_informer_.lister.ByNamespace(ns).List();
}

PodMap DeploymentController::GetPodMapForDeployment(const Deployment& d,
                                                    const ReplicaSets& rss) const {
  PodMap map;
  for (const auto& rs : rss) map[rs->metadata.uid];
  Result<api::labels::Selector> selector = SelectorOf(d);
  if (!selector.ok()) return map;
  for (const auto& pod : pod_informer_.lister.ByNamespace(d.metadata.namespace_).List()) {
    if (!selector->Matches(pod->metadata.labels)) continue;
    // Pods are grouped by their controlling RS; a pod's owner may have been released since.
    const api::OwnerReference* ref = pod->metadata.ControllerRef();
    if (ref == nullptr) continue;
    auto it = map.find(ref->uid);
    if (it != map.end()) it->second.push_back(pod);
  }
  return map;
}

Result<runtime::ReconcileResult> DeploymentController::SyncDeployment(const std::string& ns,
                                                                      const std::string& name) {
  const std::string key = ns + "/" + name;
  // Read-your-own-writes: until the informers have applied what the previous sync of this
  // Deployment wrote, the cache shows the Deployment (or its ReplicaSets) as they were before,
  // and a status or ReplicaSet write based on it would only fail with a conflict. No rate-limited
  // requeue: under Run the ConsistencyStore puts the key back on the queue once the watermarks
  // pass our writes. Without a sink (SyncDeployment called directly) nothing is requeued: the
  // store gets past the written resourceVersion only by applying that write's event, whose
  // handler enqueues this Deployment (its update event; the ReplicaSet add/update by owner).
  if (consistency_) {
    if (std::optional<controller::ConsistencyError> stale =
            consistency_->EnsureReady(key, /*wait=*/true)) {
      StaleSyncSkips(stale->group_resource).Inc();
      logger_.V(4).Info("Waiting for the informers to apply this Deployment's last writes",
                        "deployment", klog::KRef(ns, name), "reason", stale->Message());
      if (stale->waiting) return runtime::AwaitWake();
      return runtime::Done();
    }
  }
  auto cached = d_informer_.lister.ByNamespace(ns).Get(name);
  if (!cached.ok()) {
    if (errors::IsNotFound(cached.error())) {
      logger_.V(2).Info("Deployment has been deleted", "deployment", klog::KRef(ns, name));
      if (consistency_) consistency_->Clear(key, "");
      return runtime::Done();
    }
    return cached.error();
  }
  // Our own copy: the cache's object is shared and immutable.
  Deployment d = **cached;

  if (!d.spec.selector) {
    logger_.Info("Deployment has no selector; skipping", "deployment", klog::KRef(ns, name));
    return runtime::TerminalError("deployment " + ns + "/" + name + " has no selector");
  }
  if (d.spec.selector->match_labels.empty() && d.spec.selector->match_expressions.empty()) {
    Eventf(d, "Warning", "SelectingAll",
           "This deployment is selecting all pods. A non-empty selector is required.");
    if (d.status.observed_generation < d.metadata.generation) {
      d.status.observed_generation = d.metadata.generation;
      return DoneUnlessFailed(UpdateStatus(d));
    }
    return runtime::Done();
  }

  Result<ReplicaSets> rss = GetReplicaSetsForDeployment(d);
  if (!rss.ok()) return rss.error();
  if (d.metadata.deletion_timestamp) return DoneUnlessFailed(SyncStatusOnly(d, *rss));

  if (Status s = CheckPausedConditions(d); !s.ok()) return s.error();
  if (d.spec.paused) return DoneUnlessFailed(Sync(d, *rss));

  // A rollback is not re-entrant: finish it (clearing the annotation) before rolling out.
  if (util::GetRollbackTo(d)) return DoneUnlessFailed(Rollback(d, *rss));

  Result<bool> scaling = IsScalingEvent(d, *rss);
  if (!scaling.ok()) return scaling.error();
  if (*scaling) return DoneUnlessFailed(Sync(d, *rss));

  // Only Recreate reads the pods (are old ones still running?). Upstream lists them on every
  // sync; listing every pod of the namespace per sync dominated our CPU with many Deployments
  // in one namespace (bench/deployment/scale_bench.sh), so the other paths skip it.
  if (d.spec.strategy.type == "Recreate") {
    return RolloutRecreate(d, *rss, GetPodMapForDeployment(d, *rss));
  }
  if (d.spec.strategy.type == "RollingUpdate") return RolloutRolling(d, *rss);
  logger_.Info("Deployment has an unexpected strategy type", "deployment", klog::KRef(ns, name),
               "type", d.spec.strategy.type);
  return runtime::TerminalError("unexpected deployment strategy type: " + d.spec.strategy.type);
}

}  // namespace kcm::deployment
