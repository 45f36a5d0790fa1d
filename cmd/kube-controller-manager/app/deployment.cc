#include "cmd/kube-controller-manager/app/deployment.h"

#include "controllers/deployment/deployment_controller.h"

namespace kcm::app {

namespace {

class RunnableDeploymentController final : public RunnableController {
 public:
  RunnableDeploymentController(std::unique_ptr<deployment::DeploymentController> controller,
                               informers::TypedInformer<api::Deployment> deployments,
                               informers::TypedInformer<api::ReplicaSet> replicasets,
                               informers::TypedInformer<api::Pod> pods)
      : controller_(std::move(controller)),
        deployments_(std::move(deployments)),
        replicasets_(std::move(replicasets)),
        pods_(std::move(pods)) {}

  Status Run(std::stop_token stop) override {
    return controller_->Run(deployments_.informer, replicasets_.informer, pods_.informer, stop);
  }

 private:
  std::unique_ptr<deployment::DeploymentController> controller_;
  informers::TypedInformer<api::Deployment> deployments_;
  informers::TypedInformer<api::ReplicaSet> replicasets_;
  informers::TypedInformer<api::Pod> pods_;
};

}  // namespace

Result<std::unique_ptr<RunnableController>> StartDeploymentController(ControllerContext& ctx) {
  auto client = ctx.client_builder.ControllerClientFor("deployment-controller");
  if (!client.ok()) return client.error();
  auto deployments = ctx.informer_factory.Deployments();
  auto replicasets = ctx.informer_factory.ReplicaSets();
  auto pods = ctx.informer_factory.Pods();
  deployment::DeploymentControllerOptions options;
  options.workers = ctx.options.concurrent_deployment_syncs;
  options.clock = &ctx.clock;
  options.cache_sync_timeout = ctx.options.controller_cache_sync_timeout;
  auto controller = std::make_unique<deployment::DeploymentController>(
      std::make_shared<deployment::RealDeploymentClient>(*client, controller::WriteFence(ctx.stop)),
      deployments.lister, replicasets.lister, pods.lister,
      ctx.event_broadcaster.NewRecorder({"deployment-controller", ""}), std::move(options));
  return std::unique_ptr<RunnableController>(std::make_unique<RunnableDeploymentController>(
      std::move(controller), std::move(deployments), std::move(replicasets), std::move(pods)));
}

}  // namespace kcm::app
