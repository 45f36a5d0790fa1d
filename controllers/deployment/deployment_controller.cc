// The controller's wiring and syncDeployment (upstream deployment_controller.go).
#include "controllers/deployment/deployment_controller.h"

#include <glog/logging.h>

#include "pkg/api/label_selector.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/controller_ref_manager.h"
#include "pkg/record/reference.h"
#include "pkg/runtime/handler.h"
#include "pkg/runtime/informer_source.h"

namespace kcm::deployment {

namespace {

std::string Key(const api::ObjectMeta& m) {
  return m.namespace_ + "/" + m.name;
}

Result<api::labels::Selector> SelectorOf(const api::Deployment& d) {
  return api::LabelSelectorAsSelector(d.spec.selector ? &*d.spec.selector : nullptr);
}

bool SameControllerRef(const api::OwnerReference* a, const api::OwnerReference* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->api_version == b->api_version && a->kind == b->kind && a->name == b->name &&
         a->uid == b->uid && a->controller == b->controller &&
         a->block_owner_deletion == b->block_owner_deletion;
}

}  // namespace

DeploymentController::DeploymentController(std::shared_ptr<DeploymentClient> client,
                                           informers::DeploymentLister deployments,
                                           informers::ReplicaSetLister replicasets,
                                           informers::PodLister pods,
                                           std::shared_ptr<record::EventRecorder> recorder,
                                           DeploymentControllerOptions options)
    : client_(std::move(client)),
      d_lister_(std::move(deployments)),
      rs_lister_(std::move(replicasets)),
      pod_lister_(std::move(pods)),
      recorder_(std::move(recorder)),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : RealClock::Get()) {}

DeploymentController::~DeploymentController() = default;

Status DeploymentController::Run(std::shared_ptr<cache::SharedIndexInformer> deployment_informer,
                                 std::shared_ptr<cache::SharedIndexInformer> replicaset_informer,
                                 std::shared_ptr<cache::SharedIndexInformer> pod_informer,
                                 std::stop_token stop) {
  runtime::ControllerOptions opts;
  opts.name = kControllerName;
  opts.max_concurrent_reconciles = options_.workers;
  opts.clock = &clock_;
  opts.max_retries = kMaxRetries;
  opts.cache_sync_timeout = options_.cache_sync_timeout;
  auto reconciler = std::make_shared<runtime::ReconcilerFunc>(
      [this](const runtime::Request& req, std::stop_token) -> Result<runtime::ReconcileResult> {
        Status s = SyncDeployment(req.namespace_, req.name);
        if (!s.ok()) {
          VLOG(2) << "Error syncing deployment " << req.Key() << ": " << s.error().ToString();
        }
        return HandleErr(s);
      });
  runtime::Controller* controller = nullptr;
  {
    std::lock_guard lock(mu_);
    controller_ = std::make_unique<runtime::Controller>(opts, reconciler);
    controller = controller_.get();
  }
  auto enqueue_of = [](runtime::Queue& q) { return [&q](const std::string& key) { q.Add(key); }; };

  // D1: every Deployment add/update/delete syncs it.
  if (Status s =
          controller->Watch(std::make_shared<runtime::InformerSource>(deployment_informer, &clock_),
                            runtime::EnqueueRequestForObject());
      !s.ok()) {
    return s;
  }
  auto rs_handler = std::make_shared<runtime::EventHandlerFuncs>();
  rs_handler->create = [this, enqueue_of](const runtime::CreateEvent& e, runtime::Queue& q) {
    if (const auto* rs = dynamic_cast<const api::ReplicaSet*>(e.object.get())) {
      OnReplicaSetAdd(*rs, enqueue_of(q));
    }
  };
  rs_handler->update = [this, enqueue_of](const runtime::UpdateEvent& e, runtime::Queue& q) {
    const auto* old_rs = dynamic_cast<const api::ReplicaSet*>(e.old_object.get());
    const auto* cur_rs = dynamic_cast<const api::ReplicaSet*>(e.new_object.get());
    if (old_rs != nullptr && cur_rs != nullptr) OnReplicaSetUpdate(*old_rs, *cur_rs, enqueue_of(q));
  };
  rs_handler->del = [this, enqueue_of](const runtime::DeleteEvent& e, runtime::Queue& q) {
    if (const auto* rs = dynamic_cast<const api::ReplicaSet*>(e.object.get())) {
      OnReplicaSetDelete(*rs, enqueue_of(q));
    }
  };
  if (Status s = controller->Watch(
          std::make_shared<runtime::InformerSource>(replicaset_informer, &clock_), rs_handler);
      !s.ok()) {
    return s;
  }
  auto pod_handler = std::make_shared<runtime::EventHandlerFuncs>();
  pod_handler->del = [this, enqueue_of](const runtime::DeleteEvent& e, runtime::Queue& q) {
    if (const auto* pod = dynamic_cast<const api::Pod*>(e.object.get())) {
      OnPodDelete(*pod, enqueue_of(q));
    }
  };
  if (Status s = controller->Watch(std::make_shared<runtime::InformerSource>(pod_informer, &clock_),
                                   pod_handler);
      !s.ok()) {
    return s;
  }
  LOG(INFO) << "Starting controller controller=\"deployment\" workers=" << options_.workers;
  Status s = controller->Start(stop);
  LOG(INFO) << "Shutting down controller controller=\"deployment\"";
  return s;
}

Result<runtime::ReconcileResult> DeploymentController::HandleErr(const Status& sync_status) {
  if (sync_status.ok() || errors::IsNamespaceTerminating(sync_status.error())) {
    return runtime::ReconcileResult{};
  }
  return sync_status.error();
}

// --- handlers (D1) ----------------------------------------------------------------------------

DeploymentPtr DeploymentController::ResolveControllerRef(const std::string& ns,
                                                         const api::OwnerReference& ref) const {
  // A controllerRef of another kind is not ours to follow.
  if (ref.kind != "Deployment" || ref.api_version.rfind("apps/", 0) != 0) return nullptr;
  auto d = d_lister_.ByNamespace(ns).Get(ref.name);
  if (!d.ok() || (*d)->metadata.uid != ref.uid) return nullptr;  // gone, or recreated
  return *d;
}

std::vector<DeploymentPtr> DeploymentController::GetDeploymentsForReplicaSet(
    const api::ReplicaSet& rs) const {
  std::vector<DeploymentPtr> out;
  if (rs.metadata.labels.empty()) return out;
  for (const auto& d : d_lister_.ByNamespace(rs.metadata.namespace_).List()) {
    Result<api::labels::Selector> selector = SelectorOf(*d);
    // A nil or empty selector matches nothing here, never everything.
    if (!selector.ok() || selector->Empty() || selector->IsNothing()) continue;
    if (selector->Matches(rs.metadata.labels)) out.push_back(d);
  }
  if (out.size() > 1) {
    VLOG(2) << "More than one deployment is selecting replica set " << Key(rs.metadata);
  }
  return out;
}

void DeploymentController::OnReplicaSetAdd(const api::ReplicaSet& rs,
                                           const Enqueue& enqueue) const {
  if (rs.metadata.deletion_timestamp) {
    // Seen for the first time already being deleted (e.g. after a restart).
    OnReplicaSetDelete(rs, enqueue);
    return;
  }
  if (const api::OwnerReference* ref = rs.metadata.ControllerRef()) {
    if (DeploymentPtr d = ResolveControllerRef(rs.metadata.namespace_, *ref)) {
      VLOG(4) << "ReplicaSet added: " << Key(rs.metadata);
      enqueue(Key(d->metadata));
    }
    return;
  }
  // An orphan: every matching Deployment may want to adopt it.
  for (const auto& d : GetDeploymentsForReplicaSet(rs)) enqueue(Key(d->metadata));
}

void DeploymentController::OnReplicaSetUpdate(const api::ReplicaSet& old_rs,
                                              const api::ReplicaSet& cur_rs,
                                              const Enqueue& enqueue) const {
  // Periodic resyncs send unchanged objects; the Deployment resyncs on its own.
  if (cur_rs.metadata.resource_version == old_rs.metadata.resource_version) return;
  const api::OwnerReference* cur_ref = cur_rs.metadata.ControllerRef();
  const api::OwnerReference* old_ref = old_rs.metadata.ControllerRef();
  const bool ref_changed = !SameControllerRef(cur_ref, old_ref);
  if (ref_changed && old_ref != nullptr) {
    if (DeploymentPtr d = ResolveControllerRef(old_rs.metadata.namespace_, *old_ref)) {
      enqueue(Key(d->metadata));
    }
  }
  if (cur_ref != nullptr) {
    if (DeploymentPtr d = ResolveControllerRef(cur_rs.metadata.namespace_, *cur_ref)) {
      enqueue(Key(d->metadata));
    }
    return;
  }
  if (ref_changed || cur_rs.metadata.labels != old_rs.metadata.labels) {
    for (const auto& d : GetDeploymentsForReplicaSet(cur_rs)) enqueue(Key(d->metadata));
  }
}

void DeploymentController::OnReplicaSetDelete(const api::ReplicaSet& rs,
                                              const Enqueue& enqueue) const {
  const api::OwnerReference* ref = rs.metadata.ControllerRef();
  if (ref == nullptr) return;  // an orphan going away concerns nobody
  if (DeploymentPtr d = ResolveControllerRef(rs.metadata.namespace_, *ref)) {
    VLOG(4) << "ReplicaSet deleted: " << Key(rs.metadata);
    enqueue(Key(d->metadata));
  }
}

DeploymentPtr DeploymentController::GetDeploymentForPod(const api::Pod& pod) const {
  const api::OwnerReference* ref = pod.metadata.ControllerRef();
  if (ref == nullptr || ref->kind != "ReplicaSet") return nullptr;
  auto rs = rs_lister_.ByNamespace(pod.metadata.namespace_).Get(ref->name);
  if (!rs.ok() || (*rs)->metadata.uid != ref->uid) return nullptr;
  const api::OwnerReference* rs_ref = (*rs)->metadata.ControllerRef();
  if (rs_ref == nullptr) return nullptr;
  return ResolveControllerRef((*rs)->metadata.namespace_, *rs_ref);
}

void DeploymentController::OnPodDelete(const api::Pod& pod, const Enqueue& enqueue) const {
  DeploymentPtr d = GetDeploymentForPod(pod);
  // Only Recreate waits for old pods to be gone (D10).
  if (!d || d->spec.strategy.type != "Recreate") return;
  ReplicaSets owned;
  for (const auto& rs : rs_lister_.ByNamespace(d->metadata.namespace_).List()) {
    const api::OwnerReference* ref = rs->metadata.ControllerRef();
    if (ref != nullptr && ref->uid == d->metadata.uid) owned.push_back(rs);
  }
  size_t pods = 0;
  for (const auto& [uid, list] : GetPodMapForDeployment(*d, owned)) pods += list.size();
  if (pods == 0) enqueue(Key(d->metadata));
}

void DeploymentController::EnqueueAfter(const Deployment& d, std::chrono::nanoseconds after) {
  const std::string key = Key(d.metadata);
  if (options_.enqueue_after) {
    options_.enqueue_after(key, after);
    return;
  }
  std::lock_guard lock(mu_);
  if (controller_ && controller_->queue() != nullptr) {
    controller_->queue()->AddAfter(key, std::chrono::duration_cast<Clock::duration>(after));
  }
}

void DeploymentController::EnqueueRateLimited(const Deployment& d) {
  const std::string key = Key(d.metadata);
  if (options_.enqueue_rate_limited) {
    options_.enqueue_rate_limited(key);
    return;
  }
  std::lock_guard lock(mu_);
  if (controller_ && controller_->queue() != nullptr) controller_->queue()->AddRateLimited(key);
}

void DeploymentController::Eventf(const Deployment& d, std::string_view type,
                                  std::string_view reason, const std::string& message) {
  recorder_->Event(record::GetReference(d, "Deployment", "apps/v1"), type, reason, message);
}

// --- syncDeployment (D2) ----------------------------------------------------------------------

Result<ReplicaSets> DeploymentController::GetReplicaSetsForDeployment(const Deployment& d) {
  Result<api::labels::Selector> selector = SelectorOf(d);
  if (!selector.ok()) {
    return runtime::TerminalError("deployment " + Key(d.metadata) +
                                  " has invalid label selector: " + selector.error().message);
  }
  const std::string ns = d.metadata.namespace_;
  const std::string name = d.metadata.name;
  controller::CanAdoptFunc can_adopt = controller::RecheckDeletionTimestamp(
      [this, ns, name]() -> Result<api::ObjectMeta> {
        auto fresh = client_->GetDeployment(ns, name);
        if (!fresh.ok()) return fresh.error();
        return (*fresh)->metadata;
      },
      "Deployment", d.metadata.uid);
  controller::ControllerRefManager manager(d.metadata, "apps/v1", "Deployment", *selector,
                                           std::move(can_adopt));
  auto claimed = manager.ClaimObjects(rs_lister_.ByNamespace(ns).List(),
                                      controller::ReplicaSetPatcher(*client_));
  if (!claimed.status.ok()) return claimed.status.error();
  return std::move(claimed.claimed);
}

PodMap DeploymentController::GetPodMapForDeployment(const Deployment& d,
                                                    const ReplicaSets& rss) const {
  PodMap map;
  for (const auto& rs : rss) map[rs->metadata.uid];
  Result<api::labels::Selector> selector = SelectorOf(d);
  if (!selector.ok()) return map;
  for (const auto& pod : pod_lister_.ByNamespace(d.metadata.namespace_).List()) {
    if (!selector->Matches(pod->metadata.labels)) continue;
    // Pods are grouped by their controlling RS; a pod's owner may have been released since.
    const api::OwnerReference* ref = pod->metadata.ControllerRef();
    if (ref == nullptr) continue;
    auto it = map.find(ref->uid);
    if (it != map.end()) it->second.push_back(pod);
  }
  return map;
}

Status DeploymentController::SyncDeployment(const std::string& ns, const std::string& name) {
  auto cached = d_lister_.ByNamespace(ns).Get(name);
  if (!cached.ok()) {
    if (errors::IsNotFound(cached.error())) {
      VLOG(2) << "Deployment " << ns << "/" << name << " has been deleted";
      return OkStatus();
    }
    return cached.error();
  }
  // Our own copy: the cache's object is shared and immutable.
  Deployment d = **cached;

  if (!d.spec.selector) {
    LOG(WARNING) << "Deployment " << ns << "/" << name << " has no selector; skipping";
    return runtime::TerminalError("deployment " + ns + "/" + name + " has no selector");
  }
  if (d.spec.selector->match_labels.empty() && d.spec.selector->match_expressions.empty()) {
    Eventf(d, "Warning", "SelectingAll",
           "This deployment is selecting all pods. A non-empty selector is required.");
    if (d.status.observed_generation < d.metadata.generation) {
      d.status.observed_generation = d.metadata.generation;
      return UpdateStatus(d);
    }
    return OkStatus();
  }

  Result<ReplicaSets> rss = GetReplicaSetsForDeployment(d);
  if (!rss.ok()) return rss.error();
  if (d.metadata.deletion_timestamp) return SyncStatusOnly(d, *rss);

  if (Status s = CheckPausedConditions(d); !s.ok()) return s;
  if (d.spec.paused) return Sync(d, *rss);

  // A rollback is not re-entrant: finish it (clearing the annotation) before rolling out.
  if (util::GetRollbackTo(d)) return Rollback(d, *rss);

  Result<bool> scaling = IsScalingEvent(d, *rss);
  if (!scaling.ok()) return scaling.error();
  if (*scaling) return Sync(d, *rss);

  // Only Recreate reads the pods (are old ones still running?). Upstream lists them on every
  // sync; listing every pod of the namespace per sync dominated our CPU with many Deployments
  // in one namespace (bench/deployment/scale_bench.sh), so the other paths skip it.
  if (d.spec.strategy.type == "Recreate") {
    return RolloutRecreate(d, *rss, GetPodMapForDeployment(d, *rss));
  }
  if (d.spec.strategy.type == "RollingUpdate") return RolloutRolling(d, *rss);
  LOG(WARNING) << "Deployment " << ns << "/" << name << " has unexpected strategy type "
               << d.spec.strategy.type;
  return runtime::TerminalError("unexpected deployment strategy type: " + d.spec.strategy.type);
}

}  // namespace kcm::deployment
