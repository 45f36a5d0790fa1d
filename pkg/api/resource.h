// Resource: one API resource's names — group, version, plural resource, kind, scope — in one
// place for everything that names it: the informer factory's keys, the typed clients' paths, the
// consistency store's keys, ownerReferences and events, sharding and leader election. What
// client-go spreads over schema.GroupVersionResource, GroupResource and GroupVersionKind.
#pragma once

#include <string>
#include <string_view>

namespace kcm::api {

struct Resource {
  std::string_view group;  // "" for the core group
  std::string_view version;
  std::string_view resource;  // plural lower-case: "replicasets"
  std::string_view kind;      // "ReplicaSet"
  bool namespaced = true;

  // "replicasets.apps", "pods": schema.GroupResource.String(), the key the informer factory and
  // the consistency store use.
  std::string GroupResource() const {
    std::string s(resource);
    if (!group.empty()) s.append(".").append(group);
    return s;
  }
  // "apps/v1", "v1": an object's apiVersion and an ownerReference's.
  std::string ApiVersion() const {
    if (group.empty()) return std::string(version);
    return std::string(group) + "/" + std::string(version);
  }
};

inline constexpr Resource kPods{"", "v1", "pods", "Pod", true};
inline constexpr Resource kEvents{"", "v1", "events", "Event", true};
inline constexpr Resource kNamespaces{"", "v1", "namespaces", "Namespace", false};
inline constexpr Resource kServiceAccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
inline constexpr Resource kReplicaSets{"apps", "v1", "replicasets", "ReplicaSet", true};
inline constexpr Resource kDeployments{"apps", "v1", "deployments", "Deployment", true};
inline constexpr Resource kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};

}  // namespace kcm::api
