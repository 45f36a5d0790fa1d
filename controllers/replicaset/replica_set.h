// ReplicaSetController (upstream pkg/controller/replicaset): keeps spec.replicas active pods for
// every ReplicaSet, claiming matching orphans and releasing pods that stopped matching, and writes
// the ReplicaSet's status (spec R1–R15). Built on pkg/runtime: one queue "replicaset", informer
// sources for ReplicaSets and pods with the upstream handlers (expectations bookkeeping lives in
// the pod handlers), and N workers calling SyncReplicaSet. Thread-safe: handlers run on informer
// threads, syncs on worker threads (never two for the same key).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "controllers/replicaset/replica_set_client.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/controller/active_pods.h"
#include "pkg/controller/consistency.h"
#include "pkg/controller/expectations.h"
#include "pkg/controller/pod_control.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/runtime/controller.h"
#include "pkg/util/clock.h"

namespace kcm::replicaset {

using controller::PodPtr;
using Queue = runtime::Queue;

// At most this many pods are created or deleted by one sync (R6, upstream BurstReplicas).
inline constexpr int kBurstReplicas = 500;
// The queue and controller name (R1, M1).
inline constexpr const char* kControllerName = "replicaset";

struct ReplicaSetControllerOptions {
  int workers = 5;  // --concurrent-replicaset-syncs
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
  // waits (requeued rate-limited) until the informers have applied the ReplicaSet status and pod
  // writes of the previous sync, so it never acts on a cache that predates its own last action.
  bool stale_controller_consistency = true;
  // How far each store has applied its watch stream, by group resource ("replicasets.apps",
  // "pods"). Empty = the informers' LastStoreSyncResourceVersion; unit tests without informers
  // inject their own (with neither, the check is off).
  std::map<std::string, controller::ConsistencyStore::LastSyncRVGetter> consistency_rv_getters;
};

// The group resources the ConsistencyStore tracks (upstream GroupResource.String()).
inline constexpr const char* kReplicaSetsGroupResource = "replicasets.apps";
inline constexpr const char* kPodsGroupResource = "pods";

class ReplicaSetController {
 public:
  // Informers may be null in unit tests that call the handlers and SyncReplicaSet directly (Run
  // needs them). The listers are read on every sync.
  ReplicaSetController(informers::TypedInformer<api::ReplicaSet> rs_informer,
                       informers::TypedInformer<api::Pod> pod_informer,
                       std::shared_ptr<ReplicaSetClient> rs_client,
                       std::shared_ptr<controller::PodControlInterface> pod_control,
                       ReplicaSetControllerOptions options = {});
  ~ReplicaSetController();
  ReplicaSetController(const ReplicaSetController&) = delete;
  ReplicaSetController& operator=(const ReplicaSetController&) = delete;

  // Registers the handlers, waits for the pod and ReplicaSet caches, runs the workers until
  // `stop`, then lets in-flight syncs finish. Call once.
  Status Run(std::stop_token stop);

  // syncReplicaSet for "namespace/name" (R4, R5, R14, R15). An error requeues rate-limited.
  // Once `stop` is requested (the worker's token: leadership lost or shutting down) no further
  // pod create, delete or status write is started; the sync returns "Canceled".
  Result<runtime::ReconcileResult> SyncReplicaSet(const std::string& key,
                                                  std::stop_token stop = {});

  // The informer handlers (R3, R4), public for tests.
  void AddPod(const PodPtr& pod, Queue& q);
  void UpdatePod(const PodPtr& old_pod, const PodPtr& cur_pod, Queue& q);
  void DeletePod(const PodPtr& pod, Queue& q);
  void AddReplicaSet(const ReplicaSetPtr& rs, Queue& q);
  void UpdateReplicaSet(const ReplicaSetPtr& old_rs, const ReplicaSetPtr& cur_rs, Queue& q);
  void DeleteReplicaSet(const ReplicaSetPtr& rs, Queue& q);

  // A pod write for `owner` returned `resource_version` (RealPodControl::SetOnWrite): the next
  // sync of that ReplicaSet waits until the pod informer has applied it. Thread-safe.
  void RecordPodWrite(std::string_view ns, const api::OwnerReference& owner,
                      const std::string& resource_version);

  controller::UIDTrackingControllerExpectations& expectations() { return expectations_; }
  // Null when the consistency check is off.
  controller::ConsistencyStore* consistency_store() { return consistency_.get(); }
  // The runtime controller (null before Run).
  runtime::Controller* runtime_controller() { return runtime_.get(); }

 private:
  // manageReplicas (R6–R8, R11): create or delete pods so that `filtered_pods` (active, claimed)
  // reaches spec.replicas.
  Status ManageReplicas(const std::vector<PodPtr>& filtered_pods, const api::ReplicaSet& rs,
                        std::stop_token stop);
  // claimPods (R13).
  Result<std::vector<PodPtr>> ClaimPods(const api::ReplicaSet& rs,
                                        const api::labels::Selector& selector,
                                        const std::vector<PodPtr>& pods);
  // The ReplicaSet a controllerRef names, if it is in the cache with the same UID.
  ReplicaSetPtr ResolveControllerRef(const std::string& ns, const api::OwnerReference& ref) const;
  // The ReplicaSets whose selector matches an orphan pod.
  std::vector<ReplicaSetPtr> GetPodReplicaSets(const api::Pod& pod) const;
  // Pods of every ReplicaSet controlled by the same owner as `rs` (R9 ranks).
  std::vector<PodPtr> GetIndirectlyRelatedPods(const api::ReplicaSet& rs) const;
  // The pods of `ns` whose controllerRef has `uid` ("" = orphans), from the pod index by
  // controller UID when the informer has it, else by scanning the namespace.
  std::vector<PodPtr> PodsControlledBy(const std::string& ns, const std::string& uid) const;
  // The ReplicaSet is still in the cache with the same UID and not being deleted.
  bool StillInCache(const api::ReplicaSet& rs) const;
  void EnqueueAfter(const api::ReplicaSet& rs, Clock::duration delay, Queue& q) const;

  informers::TypedInformer<api::ReplicaSet> rs_informer_;
  informers::TypedInformer<api::Pod> pod_informer_;
  bool pod_uid_index_ = false;  // the pod informer carries kPodControllerUIDIndex
  std::shared_ptr<ReplicaSetClient> rs_client_;
  std::shared_ptr<controller::PodControlInterface> pod_control_;
  ReplicaSetControllerOptions options_;
  Clock& clock_;
  controller::UIDTrackingControllerExpectations expectations_;
  std::atomic<bool> track_terminating_;
  std::unique_ptr<controller::ConsistencyStore> consistency_;
  std::unique_ptr<runtime::Controller> runtime_;
};

}  // namespace kcm::replicaset
