// The "deployment" entry of the controller initializer map: builds the Deployment controller from
// the ControllerContext (its own client and event recorder, the shared Deployment, ReplicaSet and
// pod informers). Called once, from Run's thread.
#pragma once

#include <memory>

#include "cmd/kube-controller-manager/app/controller_context.h"

namespace kcm::app {

Result<std::unique_ptr<RunnableController>> StartDeploymentController(ControllerContext& ctx);

}  // namespace kcm::app
