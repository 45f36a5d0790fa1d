#include "cmd/kube-controller-manager/app/controller_context.h"

namespace kcm::app {

std::map<std::string, InitFunc> NewControllerInitializers() {
  return {};
}

}  // namespace kcm::app
