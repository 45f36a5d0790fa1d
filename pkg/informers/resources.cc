#include "pkg/informers/resources.h"

namespace kcm::informers {

namespace {

ResourceType Of(const api::Resource& r, const api::Codec& codec) {
  return ResourceType{r.GroupResource(), client::GroupVersionResource::Of(r), r.namespaced, &codec};
}

}  // namespace

const ResourceType& PodsResource() {
  static const ResourceType r = Of(api::kPods, api::PodCodec());
  return r;
}

const ResourceType& ReplicaSetsResource() {
  static const ResourceType r = Of(api::kReplicaSets, api::ReplicaSetCodec());
  return r;
}

const ResourceType& DeploymentsResource() {
  static const ResourceType r = Of(api::kDeployments, api::DeploymentCodec());
  return r;
}

ResourceType GenericResource(client::GroupVersionResource gvr, bool namespaced) {
  std::string name = gvr.resource + (gvr.group.empty() ? "" : "." + gvr.group);
  return ResourceType{std::move(name), std::move(gvr), namespaced, &api::GenericCodec()};
}

}  // namespace kcm::informers
