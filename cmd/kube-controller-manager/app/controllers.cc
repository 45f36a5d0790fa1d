#include "cmd/kube-controller-manager/app/controller_context.h"
#include "cmd/kube-controller-manager/app/replicaset.h"

namespace kcm::app {

std::map<std::string, InitFunc> NewControllerInitializers() {
  return {
      {"replicaset", StartReplicaSetController},
  };
}

}  // namespace kcm::app
