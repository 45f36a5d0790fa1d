#include "pkg/informers/resources.h"

namespace kcm::informers {

const ResourceType& PodsResource() {
  static const ResourceType r{"pods", {"", "v1", "pods"}, true, &api::PodCodec()};
  return r;
}

const ResourceType& ReplicaSetsResource() {
  static const ResourceType r{
      "replicasets.apps", {"apps", "v1", "replicasets"}, true, &api::ReplicaSetCodec()};
  return r;
}

const ResourceType& DeploymentsResource() {
  static const ResourceType r{
      "deployments.apps", {"apps", "v1", "deployments"}, true, &api::DeploymentCodec()};
  return r;
}

ResourceType GenericResource(client::GroupVersionResource gvr, bool namespaced) {
  std::string name = gvr.resource + (gvr.group.empty() ? "" : "." + gvr.group);
  return ResourceType{std::move(name), std::move(gvr), namespaced, &api::GenericCodec()};
}

}  // namespace kcm::informers
