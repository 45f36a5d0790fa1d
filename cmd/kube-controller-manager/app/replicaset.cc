#include "cmd/kube-controller-manager/app/replicaset.h"

#include "controllers/replicaset/replica_set.h"
#include "controllers/replicaset/replica_set_client.h"
#include "pkg/client/resource_client.h"
#include "pkg/controller/pod_control.h"

namespace kcm::app {
namespace {

class ReplicaSetRunnable final : public RunnableController {
 public:
  ReplicaSetRunnable(std::shared_ptr<record::EventRecorder> recorder,
                     std::shared_ptr<controller::PodControlInterface> pod_control,
                     std::unique_ptr<replicaset::ReplicaSetController> controller)
      : recorder_(std::move(recorder)),
        pod_control_(std::move(pod_control)),
        controller_(std::move(controller)) {}

  Status Run(std::stop_token stop) override { return controller_->Run(stop); }

 private:
  std::shared_ptr<record::EventRecorder> recorder_;  // RealPodControl keeps a reference
  std::shared_ptr<controller::PodControlInterface> pod_control_;
  std::unique_ptr<replicaset::ReplicaSetController> controller_;
};

}  // namespace

Result<std::unique_ptr<RunnableController>> StartReplicaSetController(ControllerContext& ctx) {
  auto rest = ctx.client_builder.ControllerClientFor("replicaset-controller");
  if (!rest.ok()) return rest.error();
  auto pods = std::make_shared<client::ResourceClient>(
      *rest, client::GroupVersionResource{"", "v1", "pods"}, true);
  auto replicasets = std::make_shared<client::ResourceClient>(
      *rest, client::GroupVersionResource{"apps", "v1", "replicasets"}, true);
  std::shared_ptr<record::EventRecorder> recorder =
      ctx.event_broadcaster.NewRecorder({"replicaset-controller", ""});
  // Every write is fenced with the leader's token: none goes out once the lease is lost.
  const controller::WriteFence fence(ctx.stop);
  auto pod_control =
      std::make_shared<controller::RealPodControl>(pods, *recorder, "apps/v1", fence);

  replicaset::ReplicaSetControllerOptions options;
  options.workers = ctx.options.concurrent_replicaset_syncs;
  options.clock = &ctx.clock;
  options.cache_sync_timeout = ctx.options.controller_cache_sync_timeout;
  options.stale_controller_consistency =
      ctx.options.feature_gates.Enabled(features::kStaleControllerConsistencyReplicaSet);
  auto controller = std::make_unique<replicaset::ReplicaSetController>(
      ctx.informer_factory.ReplicaSets(), ctx.informer_factory.Pods(),
      std::make_shared<replicaset::RealReplicaSetClient>(replicasets, fence), pod_control, options);
  // Pods the controller creates or adopts hold its next sync until the pod informer has them.
  pod_control->SetOnWrite(
      [c = controller.get()](std::string_view ns, const api::OwnerReference& owner,
                             const std::string& rv) { c->RecordPodWrite(ns, owner, rv); });
  return std::unique_ptr<RunnableController>(std::make_unique<ReplicaSetRunnable>(
      std::move(recorder), std::move(pod_control), std::move(controller)));
}

}  // namespace kcm::app
