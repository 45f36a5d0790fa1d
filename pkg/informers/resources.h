// ResourceType: what the factory needs to build an informer for one resource — its REST address,
// scope and decoder. The built-in resources are immutable singletons; thread-safe.
#pragma once

#include <string>

#include "pkg/api/codec.h"
#include "pkg/client/request_path.h"

namespace kcm::informers {

struct ResourceType {
  std::string name;  // the factory's key, e.g. "pods", "replicasets.apps"
  client::GroupVersionResource gvr;
  bool namespaced = true;
  const api::Codec* codec = nullptr;
};

const ResourceType& PodsResource();         // v1 pods, decoded into the pruned api::Pod
const ResourceType& ReplicaSetsResource();  // apps/v1 replicasets
const ResourceType& DeploymentsResource();  // apps/v1 deployments

// Any resource, including custom resources, as schema-less api::GenericObject.
ResourceType GenericResource(client::GroupVersionResource gvr, bool namespaced);

}  // namespace kcm::informers
