// DeploymentController (upstream pkg/controller/deployment): rolls Deployments out through
// ReplicaSets. It is a runtime::Reconciler: Reconcile (syncDeployment, then handleErr) reads
// Deployments, ReplicaSets and pods from listers, claims ReplicaSets, then scales, rolls out
// (RollingUpdate or Recreate), rolls back, cleans up history and writes status; a later check it
// needs (requeueStuckDeployment's progress deadline) comes back in the ReconcileResult. The
// handlers map informer events to the Requests to enqueue; Run wires both into a
// runtime::Controller (runtime::NewControllerManagedBy). The method bodies are split like upstream:
// deployment_controller.cc (handlers, syncDeployment), sync.cc, rolling.cc, recreate.cc,
// progress.cc, rollback.cc. Thread-safe: the runtime never reconciles one key on two workers at
// once, and a sync works on its own copy of the Deployment.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controllers/deployment/config.h"
#include "controllers/deployment/util/deployment_util.h"
#include "pkg/api/pod.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/controller/informer_consistency.h"
#include "pkg/controller/typed_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/record/event_recorder.h"
#include "pkg/runtime/reconciler.h"
#include "pkg/util/clock.h"
#include "pkg/util/klog_logger.h"
#include "pkg/util/result.h"

namespace kcm::deployment {

using controller::DeploymentPtr;
using controller::ReplicaSetPtr;
using util::ReplicaSets;
using PodPtr = std::shared_ptr<const api::Pod>;
// Pods grouped by the UID of the ReplicaSet that controls them.
using PodMap = std::map<std::string, std::vector<PodPtr>>;

inline constexpr const char* kControllerName = "deployment";
inline constexpr int kMaxRetries = 15;  // upstream maxRetries: then the key is dropped

struct DeploymentControllerOptions {
  int concurrent_deployment_syncs = kDefaultConcurrentDeploymentSyncs;  // workers
  Clock* clock = nullptr;                                               // null = RealClock
  // How long Run waits for the caches before failing; zero = until stopped (upstream's
  // WaitForNamedCacheSync).
  std::chrono::nanoseconds cache_sync_timeout{0};
  // Read-your-own-writes (the ReplicaSet controller's ConsistencyStore, applied to the
  // Deployment's own writes): a sync does nothing until the Deployment and ReplicaSet informers
  // have applied the Deployment status, ReplicaSet creates and ReplicaSet updates the previous
  // sync of the same Deployment wrote (Run's controller puts it back on the queue once they
  // have; without Run, those writes' events enqueue it again). Upstream v1.37 has
  // no such check for Deployments; without it a sync that follows our own write within the
  // informer's latency works on the Deployment as it was before that write, and its status write
  // fails with a conflict (losing, e.g., the "Created new replica set" condition of a Recreate
  // rollout).
  bool read_your_writes = true;
  // The stores' applied resourceVersion per group resource ("deployments.apps",
  // "replicasets.apps"); empty = the informers' LastStoreSyncResourceVersion (unit tests inject
  // their own).
  std::map<std::string, controller::ConsistencyStore::LastSyncRVGetter> consistency_rv_getters;
};

class DeploymentController final : public runtime::Reconciler {
 public:
  // Informers may be null in unit tests that call the handlers and Reconcile directly (Run needs
  // them). The listers are read on every sync.
  DeploymentController(informers::TypedInformer<api::Deployment> d_informer,
                       informers::TypedInformer<api::ReplicaSet> rs_informer,
                       informers::TypedInformer<api::Pod> pod_informer,
                       std::shared_ptr<controller::DeploymentClient> deployments,
                       std::shared_ptr<controller::ReplicaSetClient> replicasets,
                       std::shared_ptr<record::EventRecorder> recorder,
                       DeploymentControllerOptions options = {});
  ~DeploymentController() override;
  DeploymentController(const DeploymentController&) = delete;
  DeploymentController& operator=(const DeploymentController&) = delete;

  // Registers the handlers on the informers, waits for their caches, runs the workers until
  // `stop`, then lets in-flight syncs finish. Call once. Errors: missing informers, a cache that
  // never synced.
  Status Run(std::stop_token stop);

  // syncDeployment for the request's Deployment, then handleErr. A RequeueAfter result is
  // the progress-deadline check (requeueStuckDeployment). `stop` is not read here: the daemon's
  // clients are fenced with the same leader token, so no write starts after it.
  Result<runtime::ReconcileResult> Reconcile(const runtime::Request& request,
                                             std::stop_token stop) override;
  // syncDeployment alone: errors are returned as they are (Reconcile applies HandleErr).
  Result<runtime::ReconcileResult> SyncDeployment(const std::string& ns, const std::string& name);
  // The read-your-own-writes store; null when read_your_writes is off. For tests.
  controller::ConsistencyStore* consistency_store() { return consistency_.get(); }
  // What a sync's outcome means for the queue (upstream handleErr): success, and also a create
  // refused because the namespace is terminating (every later create would fail too), forget the
  // key; any other error is retried rate-limited (up to kMaxRetries, by the runtime).
  static Result<runtime::ReconcileResult> HandleErr(Result<runtime::ReconcileResult> sync_result);

  // Event handlers (upstream addReplicaSet, updateReplicaSet, deleteReplicaSet, deletePod): each
  // returns the Deployments to enqueue. Public for tests.
  std::vector<runtime::Request> OnReplicaSetAdd(const api::ReplicaSet& rs) const;
  std::vector<runtime::Request> OnReplicaSetUpdate(const api::ReplicaSet& old_rs,
                                                   const api::ReplicaSet& cur_rs) const;
  std::vector<runtime::Request> OnReplicaSetDelete(const api::ReplicaSet& rs) const;
  std::vector<runtime::Request> OnPodDelete(const api::Pod& pod) const;

  // cleanupUnhealthyReplicas: scales old ReplicaSets down by their unavailable pods, at most
  // `max_cleanup_count` in all; `old_rss` is sorted oldest first and updated with what was
  // written. Public for tests: its errors never fail a sync (ReconcileOldReplicaSets).
  Result<int32_t> CleanupUnhealthyReplicas(ReplicaSets& old_rss, const api::Deployment& d,
                                           int32_t max_cleanup_count);

 private:
  using Deployment = api::Deployment;

  // --- deployment_controller.cc
  DeploymentPtr ResolveControllerRef(const std::string& ns, const api::OwnerReference& ref) const;
  std::vector<DeploymentPtr> GetDeploymentsForReplicaSet(const api::ReplicaSet& rs) const;
  DeploymentPtr GetDeploymentForPod(const api::Pod& pod) const;
  Result<ReplicaSets> GetReplicaSetsForDeployment(const Deployment& d);
  // The ReplicaSets a claim by the Deployment with this UID can act on: its own and the
  // namespace's orphans (every ReplicaSet of the namespace without the index).
  ReplicaSets ReplicaSetsToClaim(const std::string& ns, const std::string& uid) const;
  PodMap GetPodMapForDeployment(const Deployment& d, const ReplicaSets& rss) const;

  // --- sync.cc
  Status Sync(Deployment& d, const ReplicaSets& rss);
  Status CheckPausedConditions(Deployment& d);
  struct AllReplicaSets {
    ReplicaSetPtr new_rs;  // null when none matches (and none was created)
    ReplicaSets old_rss;
  };
  Result<AllReplicaSets> GetAllReplicaSetsAndSyncRevision(Deployment& d, const ReplicaSets& rss,
                                                          bool create_if_not_existed);
  // `existing`: FindNewReplicaSet(d, rss), which the caller has already computed (upstream's
  // getNewReplicaSet computes it a second time; the answer is the same, and each comparison
  // inflates two packed templates).
  Result<ReplicaSetPtr> GetNewReplicaSet(Deployment& d, const ReplicaSetPtr& existing,
                                         const ReplicaSets& old_rss, bool create_if_not_existed);
  Status Scale(Deployment& d, const ReplicaSetPtr& new_rs, const ReplicaSets& old_rss);
  struct ScaleResult {
    bool scaled = false;
    ReplicaSetPtr rs;  // the RS after the call (updated when written)
  };
  Result<ScaleResult> ScaleReplicaSetAndRecordEvent(const ReplicaSetPtr& rs, int32_t new_scale,
                                                    const Deployment& d);
  Result<ScaleResult> ScaleReplicaSet(const ReplicaSetPtr& rs, int32_t new_scale,
                                      const Deployment& d, const std::string& operation);
  Result<bool> IsScalingEvent(Deployment& d, const ReplicaSets& rss);
  Status CleanupDeployment(const ReplicaSets& old_rss, const Deployment& d);
  Status SyncDeploymentStatus(const ReplicaSets& all_rss, const ReplicaSetPtr& new_rs,
                              Deployment& d);
  Status SyncStatusOnly(Deployment& d, const ReplicaSets& rss);
  api::DeploymentStatus CalculateStatus(const ReplicaSets& all_rss, const ReplicaSetPtr& new_rs,
                                        const Deployment& d) const;
  // PUT .../status of `d` (its annotations and status); `d` becomes the server's answer.
  Status UpdateStatus(Deployment& d);

  // --- rolling.cc
  Result<runtime::ReconcileResult> RolloutRolling(Deployment& d, const ReplicaSets& rss);
  Result<bool> ReconcileNewReplicaSet(const ReplicaSets& all_rss, const ReplicaSetPtr& new_rs,
                                      const Deployment& d);
  Result<bool> ReconcileOldReplicaSets(const ReplicaSets& all_rss, ReplicaSets old_rss,
                                       const ReplicaSetPtr& new_rs, const Deployment& d);
  Result<int32_t> ScaleDownOldReplicaSetsForRollingUpdate(const ReplicaSets& all_rss,
                                                          ReplicaSets old_rss, const Deployment& d);

  // --- recreate.cc
  Result<runtime::ReconcileResult> RolloutRecreate(Deployment& d, const ReplicaSets& rss,
                                                   const PodMap& pod_map);
  Result<bool> ScaleDownOldReplicaSetsForRecreate(ReplicaSets& old_rss, const Deployment& d);

  // --- progress.cc
  // syncRolloutStatus: writes the status when it changed; when it did not, the result carries
  // requeueStuckDeployment's next progress check.
  Result<runtime::ReconcileResult> SyncRolloutStatus(const ReplicaSets& all_rss,
                                                     const ReplicaSetPtr& new_rs, Deployment& d);
  std::vector<api::Condition> GetReplicaFailures(const ReplicaSets& all_rss,
                                                 const ReplicaSetPtr& new_rs) const;
  runtime::ReconcileResult RequeueStuckDeployment(const Deployment& d,
                                                  const api::DeploymentStatus& new_status) const;

  // --- rollback.cc
  Status Rollback(Deployment& d, const ReplicaSets& rss);
  Result<bool> RollbackToTemplate(Deployment& d, const api::ReplicaSet& rs);
  Status UpdateDeploymentAndClearRollbackTo(Deployment& d);
  void EmitRollbackWarningEvent(const Deployment& d, std::string_view reason,
                                const std::string& message);

  void Eventf(const Deployment& d, std::string_view type, std::string_view reason,
              const std::string& message);
  api::Time Now() const { return clock_.WallNow(); }
  // Records a write of this sync for the read-your-own-writes check (no-op when it is off).
  void RecordWrite(const Deployment& d, const std::string& group_resource,
                   const std::string& resource_version);
  // History cleanup's deletes that the ReplicaSet informer has not applied yet (see
  // deleted_rss_).
  void NoteDeleted(const api::ReplicaSet& rs);
  bool DeletedButStillCached(const api::ReplicaSet& rs) const;

  informers::TypedInformer<api::Deployment> d_informer_;
  informers::TypedInformer<api::ReplicaSet> rs_informer_;
  informers::TypedInformer<api::Pod> pod_informer_;
  std::shared_ptr<controller::DeploymentClient> deployments_;
  std::shared_ptr<controller::ReplicaSetClient> replicasets_;
  std::shared_ptr<record::EventRecorder> recorder_;
  DeploymentControllerOptions options_;
  Clock& clock_;
  // Empty when read_your_writes is off or no store can vouch for the caches.
  controller::InformerConsistency consistency_;
  bool rs_uid_index_ = false;  // the ReplicaSet informer carries the controller UID index
  // UIDs of the ReplicaSets cleanupDeployment deleted that the ReplicaSet cache still holds. A
  // DELETE of a ReplicaSet answers with a Status, not the object, so there is no resourceVersion
  // for the read-your-own-writes store to wait for; a sync that runs before the informer applied
  // the delete would find the ReplicaSet still there and delete it again (a 404 upstream's
  // cleanupDeployment ignores, but a request all the same). Cleanup treats these as already going
  // away, as it treats one with a deletionTimestamp, which is what a caught-up cache would show.
  // Entries leave when the informer's delete event arrives (OnReplicaSetDelete), or at once if
  // the cache applied the delete before the entry was made. Guarded by deleted_rss_mu_; mutable
  // because the event handlers are const.
  mutable std::mutex deleted_rss_mu_;
  mutable std::unordered_set<std::string> deleted_rss_;
  // Named as upstream's controller-manager names this controller's logger
  // (controller_descriptor.go: klog.LoggerWithName(logger, controllerName)).
  klog::Logger logger_ = klog::Background().WithName("deployment-controller");
};

}  // namespace kcm::deployment
