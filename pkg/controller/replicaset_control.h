// RSControlInterface: how the Deployment controller patches ReplicaSets when it adopts or releases
// them (upstream's RSControlInterface, used by ReplicaSetControllerRefManager). The one
// implementation is the Deployment controller's write seam, DeploymentClient. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::controller {

class RSControlInterface {
 public:
  virtual ~RSControlInterface() = default;
  // Sends a strategic merge patch to ReplicaSet `name`.
  virtual Status PatchReplicaSet(std::string_view ns, std::string_view name,
                                 const std::string& patch) = 0;
};

}  // namespace kcm::controller
