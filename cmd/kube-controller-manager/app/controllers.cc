#include "cmd/kube-controller-manager/app/controller_context.h"
#include "cmd/kube-controller-manager/app/deployment.h"
#include "cmd/kube-controller-manager/app/replicaset.h"

namespace kcm::app {

std::map<std::string, InitFunc> NewControllerInitializers() {
  return {
      {"deployment", StartDeploymentController},
      {"replicaset", StartReplicaSetController},
  };
}

}  // namespace kcm::app
