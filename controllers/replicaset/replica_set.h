// ReplicaSetController (upstream pkg/controller/replicaset): keeps spec.replicas active pods for
// every ReplicaSet, claiming matching orphans and releasing pods that stopped matching, and writes
// the ReplicaSet's status. It is a runtime::Reconciler: Reconcile is syncReplicaSet, and the
// availability check it needs later (minReadySeconds) comes back in the ReconcileResult. The
// handlers map informer events to the Requests to enqueue (the expectations bookkeeping lives in
// the pod handlers, as upstream); Run wires both into a runtime::Controller named "replicaset"
// (runtime::NewControllerManagedBy).
// Thread-safe: handlers run on informer threads, reconciles on worker threads (never two for the
// same key).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "controllers/replicaset/config.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/controller/active_pods.h"
#include "pkg/controller/expectations.h"
#include "pkg/controller/informer_consistency.h"
#include "pkg/controller/pod_control.h"
#include "pkg/controller/slow_start.h"
#include "pkg/controller/typed_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/runtime/controller.h"
#include "pkg/runtime/handler.h"
#include "pkg/runtime/reconciler.h"
#include "pkg/util/clock.h"
#include "pkg/util/klog_logger.h"

namespace kcm::replicaset {

using controller::PodPtr;
using controller::ReplicaSetClient;
using controller::ReplicaSetPtr;

// At most this many pods are created or deleted by one sync (upstream BurstReplicas).
inline constexpr int kBurstReplicas = 500;
// The queue and controller name (upstream's workqueue name).
inline constexpr const char* kControllerName = "replicaset";

struct ReplicaSetControllerOptions {
  int concurrent_replicaset_syncs = kDefaultConcurrentReplicaSetSyncs;  // workers
  int burst_replicas = kBurstReplicas;
  Clock* clock = nullptr;  // null = RealClock
  // Makes the queue's rate limiter; null = DefaultControllerRateLimiter.
  std::function<std::unique_ptr<workqueue::RateLimiter>(Clock&)> rate_limiter;
  // Workers start only once both caches synced; zero = wait until stopped, as upstream's
  // WaitForNamedCacheSync.
  std::chrono::nanoseconds cache_sync_timeout{0};
  // Compute status.terminatingReplicas. Turned off by itself when the API server drops the field.
  bool track_terminating_replicas = true;
  // Feature gate StaleControllerConsistencyReplicaSet (on by default, as upstream v1.36+): a sync
  // waits until the informers have applied the ReplicaSet status and pod writes of the previous
  // sync, so it never acts on a cache that predates its own last action. Run's controller puts
  // the waiting ReplicaSet back on its queue when the informers get there
  // (ConsistencyStore::SetReadySink); without that (Reconcile called directly, injected getters)
  // the sync is requeued rate-limited, as upstream's returned error is.
  bool stale_controller_consistency = true;
  // How far each store has applied its watch stream, by group resource ("replicasets.apps",
  // "pods"). Empty = the informers' LastStoreSyncResourceVersion; unit tests without informers
  // inject their own (with neither, the check is off).
  std::map<std::string, controller::ConsistencyStore::LastSyncRVGetter> consistency_rv_getters;
};

class ReplicaSetController final : public runtime::Reconciler {
 public:
  // Informers may be null in unit tests that call the handlers and Reconcile directly (Run needs
  // them). The listers are read on every sync.
  ReplicaSetController(informers::TypedInformer<api::ReplicaSet> rs_informer,
                       informers::TypedInformer<api::Pod> pod_informer,
                       std::shared_ptr<ReplicaSetClient> replicasets,
                       std::shared_ptr<controller::PodControlInterface> pod_control,
                       ReplicaSetControllerOptions options = {});
  ~ReplicaSetController() override;
  ReplicaSetController(const ReplicaSetController&) = delete;
  ReplicaSetController& operator=(const ReplicaSetController&) = delete;

  // Registers the handlers, waits for the pod and ReplicaSet caches, runs the workers until
  // `stop`, then lets in-flight syncs finish. Call once.
  Status Run(std::stop_token stop);

  // syncReplicaSet for the request's ReplicaSet. An error requeues rate-limited; RequeueAfter is
  // the next availability check (minReadySeconds). Once `stop` is requested (the worker's token:
  // leadership lost or shutting down) no further pod create, delete or status write is started;
  // the sync returns "Canceled".
  Result<runtime::ReconcileResult> Reconcile(const runtime::Request& request,
                                             std::stop_token stop) override;

  // The informer handlers (upstream addPod, updatePod, deletePod, addRS, updateRS, deleteRS):
  // each records what the expectations must learn and returns the ReplicaSets to enqueue. Public
  // for tests.
  std::vector<runtime::Enqueue> AddPod(const PodPtr& pod);
  std::vector<runtime::Enqueue> UpdatePod(const PodPtr& old_pod, const PodPtr& cur_pod);
  std::vector<runtime::Enqueue> DeletePod(const PodPtr& pod);
  std::vector<runtime::Enqueue> AddReplicaSet(const ReplicaSetPtr& rs);
  std::vector<runtime::Enqueue> UpdateReplicaSet(const ReplicaSetPtr& old_rs,
                                                 const ReplicaSetPtr& cur_rs);
  std::vector<runtime::Enqueue> DeleteReplicaSet(const ReplicaSetPtr& rs);

  // A pod write for `owner` returned `resource_version` (RealPodControl::SetOnWrite): the next
  // sync of that ReplicaSet waits until the pod informer has applied it. Thread-safe.
  void RecordPodWrite(std::string_view ns, const api::OwnerReference& owner,
                      const std::string& resource_version);

  controller::UIDTrackingControllerExpectations& expectations() { return expectations_; }
  // Null when the consistency check is off.
  controller::ConsistencyStore* consistency_store() { return consistency_.get(); }

 private:
  // manageReplicas: create or delete pods so that `filtered_pods` (active, claimed)
  // reaches spec.replicas.
  Status ManageReplicas(const std::vector<PodPtr>& filtered_pods, const api::ReplicaSet& rs,
                        std::stop_token stop);
  // claimPods.
  Result<std::vector<PodPtr>> ClaimPods(const api::ReplicaSet& rs,
                                        const api::labels::Selector& selector,
                                        const std::vector<PodPtr>& pods);
  // The ReplicaSet a controllerRef names, if it is in the cache with the same UID.
  ReplicaSetPtr ResolveControllerRef(const std::string& ns, const api::OwnerReference& ref) const;
  // The ReplicaSets whose selector matches an orphan pod.
  std::vector<ReplicaSetPtr> GetPodReplicaSets(const api::Pod& pod) const;
  // Pods of every ReplicaSet controlled by the same owner as `rs` (upstream
  // getIndirectlyRelatedPods: the ranks of pods to delete).
  std::vector<PodPtr> GetIndirectlyRelatedPods(const api::ReplicaSet& rs) const;
  // The pods of `ns` whose controllerRef has `uid` ("" = orphans), from the pod index by
  // controller UID when the informer has it, else by scanning the namespace.
  std::vector<PodPtr> PodsControlledBy(const std::string& ns, const std::string& uid) const;
  // The ReplicaSet is still in the cache with the same UID and not being deleted.
  bool StillInCache(const api::ReplicaSet& rs) const;

  informers::TypedInformer<api::ReplicaSet> rs_informer_;
  informers::TypedInformer<api::Pod> pod_informer_;
  bool pod_uid_index_ = false;  // the pod informer carries kPodControllerUIDIndex
  std::shared_ptr<ReplicaSetClient> replicasets_;
  std::shared_ptr<controller::PodControlInterface> pod_control_;
  ReplicaSetControllerOptions options_;
  Clock& clock_;
  controller::UIDTrackingControllerExpectations expectations_;
  std::atomic<bool> track_terminating_;
  // Empty when stale_controller_consistency is off or no store can vouch for the caches.
  controller::InformerConsistency consistency_;
  // Named as upstream's controller-manager names this controller's logger
  // (controller_descriptor.go: klog.LoggerWithName(logger, controllerName)).
  klog::Logger logger_ = klog::Background().WithName("replicaset-controller");
};

}  // namespace kcm::replicaset
