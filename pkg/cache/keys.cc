#include "pkg/cache/keys.h"

namespace kcm::cache {

const DeletedFinalStateUnknown* AsTombstone(const api::Object& obj) {
  // Kind() is checked first so that the common case costs a string compare, not an RTTI lookup.
  if (obj.Kind() != DeletedFinalStateUnknown::kKind) {
    return nullptr;
  }
  return dynamic_cast<const DeletedFinalStateUnknown*>(&obj);
}

std::string MetaNamespaceKeyFunc(const api::Object& obj) {
  const api::ObjectMeta& meta = obj.Meta();
  if (meta.namespace_.empty()) {
    return meta.name;
  }
  std::string key;
  key.reserve(meta.namespace_.size() + 1 + meta.name.size());
  key.append(meta.namespace_).append("/").append(meta.name);
  return key;
}

std::string DeletionHandlingMetaNamespaceKeyFunc(const api::Object& obj) {
  if (const auto* tombstone = AsTombstone(obj)) {
    return tombstone->Key();
  }
  return MetaNamespaceKeyFunc(obj);
}

Result<std::pair<std::string, std::string>> SplitMetaNamespaceKey(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) {
    if (key.empty()) {
      return Error::Local("InvalidKey", "empty key");
    }
    return std::pair<std::string, std::string>{"", std::string(key)};
  }
  std::string_view ns = key.substr(0, slash);
  std::string_view name = key.substr(slash + 1);
  if (ns.empty() || name.empty() || name.find('/') != std::string_view::npos) {
    return Error::Local("InvalidKey", "unexpected key format: \"" + std::string(key) + "\"");
  }
  return std::pair<std::string, std::string>{std::string(ns), std::string(name)};
}

}  // namespace kcm::cache
