#include "pkg/record/reference.h"

#include <string>

namespace kcm::record {

ObjectReference GetReference(const api::Object& object, std::string_view kind,
                             std::string_view api_version) {
  const api::ObjectMeta& meta = object.Meta();
  ObjectReference ref;
  ref.kind = std::string(kind);
  ref.namespace_ = meta.namespace_;
  ref.name = meta.name;
  ref.uid = meta.uid;
  ref.api_version = std::string(api_version);
  ref.resource_version = meta.resource_version;
  return ref;
}

ObjectReference GetReference(const api::Object& object, std::string_view api_version) {
  return GetReference(object, object.Kind(), api_version);
}

}  // namespace kcm::record
