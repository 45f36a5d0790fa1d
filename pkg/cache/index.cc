#include "pkg/cache/index.h"

namespace kcm::cache {

std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj) {
  return {obj.Meta().namespace_};
}

}  // namespace kcm::cache
