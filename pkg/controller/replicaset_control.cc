#include "pkg/controller/replicaset_control.h"

#include "pkg/client/resource_client.h"

namespace kcm::controller {

Status RealRSControl::PatchReplicaSet(std::string_view ns, std::string_view name,
                                      const std::string& patch) {
  Result<std::string> patched =
      replicasets_->Patch(ns, name, client::PatchType::kStrategicMergePatch, patch);
  if (!patched.ok()) return patched.error();
  return OkStatus();
}

}  // namespace kcm::controller
