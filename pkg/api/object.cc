#include "pkg/api/object.h"

namespace kcm::api {

std::string MetaNamespaceKey(const ObjectMeta& meta) {
  if (meta.namespace_.empty()) return meta.name;
  return meta.namespace_ + "/" + meta.name;
}

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const OwnerReference& ref : owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

}  // namespace kcm::api
