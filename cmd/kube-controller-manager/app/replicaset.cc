#include "cmd/kube-controller-manager/app/replicaset.h"

#include "controllers/replicaset/replica_set.h"
#include "pkg/client/resource_client.h"
#include "pkg/controller/fenced_client.h"
#include "pkg/controller/pod_control.h"

namespace kcm::app {

Result<std::unique_ptr<RunnableController>> StartReplicaSetController(ControllerContext& ctx) {
  auto rest = ctx.client_builder.ControllerClientFor("replicaset-controller");
  if (!rest.ok()) return rest.error();
  // Every write is fenced with the leader's token: none goes out once the lease is lost.
  const controller::WriteFence fence(ctx.stop, ctx.namespaces);
  // Its own broadcaster: events spend the controller's --kube-api-qps tokens, as upstream's.
  std::shared_ptr<record::EventBroadcaster> broadcaster = NewControllerEventBroadcaster(ctx, *rest);
  std::shared_ptr<record::EventRecorder> recorder =
      broadcaster->NewRecorder({"replicaset-controller", ""});
  auto pods = std::make_shared<client::ResourceClient>(*rest, api::kPods);
  auto pod_control = std::make_shared<controller::RealPodControl>(
      pods, *recorder, api::kReplicaSets.ApiVersion(), fence);

  replicaset::ReplicaSetControllerOptions options;
  options.concurrent_replicaset_syncs = ctx.options.concurrent_replicaset_syncs;
  options.clock = &ctx.clock;
  options.cache_sync_timeout = ctx.options.controller_cache_sync_timeout;
  options.stale_controller_consistency =
      ctx.options.feature_gates.Enabled(features::kStaleControllerConsistencyReplicaSet);
  auto controller = std::make_unique<replicaset::ReplicaSetController>(
      ctx.informer_factory.ReplicaSets(), ctx.informer_factory.Pods(),
      controller::NewFencedClient<api::ReplicaSet>(*rest, fence), pod_control, std::move(options));
  // Pods the controller creates or adopts hold its next sync until the pod informer has them.
  pod_control->SetOnWrite(
      [c = controller.get()](std::string_view ns, const api::OwnerReference& owner,
                             const std::string& rv) { c->RecordPodWrite(ns, owner, rv); });
  // RealPodControl records events through a reference to the recorder: keep it alive, and the
  // broadcaster that writes them.
  return std::make_unique<RunnableController>(
      std::move(controller),
      std::vector<std::shared_ptr<const void>>{std::move(recorder), std::move(broadcaster)});
}

}  // namespace kcm::app
