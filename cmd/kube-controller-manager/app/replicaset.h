// The "replicaset" entry of the controller initializer map: builds the ReplicaSet controller from
// the ControllerContext (its own client and event recorder, the shared pod and ReplicaSet
// informers). Called once, from Run's thread.
#pragma once

#include <memory>

#include "cmd/kube-controller-manager/app/controller_context.h"

namespace kcm::app {

Result<std::unique_ptr<RunnableController>> StartReplicaSetController(ControllerContext& ctx);

}  // namespace kcm::app
