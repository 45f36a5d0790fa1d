// Object: the common base of every typed Kubernetes object the caches hold (Pod, ReplicaSet,
// Deployment, Lease, generic objects). Cached objects are immutable and shared as ObjectPtr;
// all const member functions are safe to call from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/object_meta.h"

namespace kcm::api {

class Object {
 public:
  virtual ~Object() = default;
  // "Pod", "ReplicaSet", ... (the API kind).
  virtual std::string_view Kind() const = 0;
  virtual const ObjectMeta& Meta() const = 0;
};

using ObjectPtr = std::shared_ptr<const Object>;

}  // namespace kcm::api
