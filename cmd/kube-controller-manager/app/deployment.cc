#include "cmd/kube-controller-manager/app/deployment.h"

#include "controllers/deployment/deployment_controller.h"
#include "pkg/controller/fenced_client.h"

namespace kcm::app {

Result<std::unique_ptr<RunnableController>> StartDeploymentController(ControllerContext& ctx) {
  auto rest = ctx.client_builder.ControllerClientFor("deployment-controller");
  if (!rest.ok()) return rest.error();
  // Every write is fenced with the leader's token: none goes out once the lease is lost.
  const controller::WriteFence fence(ctx.stop, ctx.namespaces);
  // Its own broadcaster: events spend the controller's --kube-api-qps tokens, as upstream's.
  std::shared_ptr<record::EventBroadcaster> broadcaster = NewControllerEventBroadcaster(ctx, *rest);
  std::shared_ptr<record::EventRecorder> recorder =
      broadcaster->NewRecorder({"deployment-controller", ""});

  deployment::DeploymentControllerOptions options;
  options.concurrent_deployment_syncs = ctx.options.concurrent_deployment_syncs;
  options.clock = &ctx.clock;
  options.cache_sync_timeout = ctx.options.controller_cache_sync_timeout;
  auto controller = std::make_unique<deployment::DeploymentController>(
      ctx.informer_factory.Deployments(), ctx.informer_factory.ReplicaSets(),
      ctx.informer_factory.Pods(), controller::NewFencedClient<api::Deployment>(*rest, fence),
      controller::NewFencedClient<api::ReplicaSet>(*rest, fence), recorder, std::move(options));
  return std::make_unique<RunnableController>(
      std::move(controller), std::vector<std::shared_ptr<const void>>{std::move(broadcaster)});
}

}  // namespace kcm::app
