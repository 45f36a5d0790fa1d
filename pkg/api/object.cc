#include "pkg/api/object.h"

namespace kcm::api {

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const OwnerReference& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

}  // namespace kcm::api
