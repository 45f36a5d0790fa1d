#include "pkg/controller/replicaset_control.h"

#include "pkg/client/resource_client.h"

namespace kcm::controller {

Status RealRSControl::PatchReplicaSet(std::string_view ns, std::string_view name,
                                      const std::string& patch) {
  if (Status f = fence_.Check("patch replicaset " + std::string(ns) + "/" + std::string(name));
      !f.ok()) {
    return f;
  }
  Result<std::string> patched = replicasets_->Patch(
      ns, name, client::PatchType::kStrategicMergePatch, patch, {}, "", fence_.token());
  if (!patched.ok()) return patched.error();
  return OkStatus();
}

}  // namespace kcm::controller
