#include "pkg/cache/index.h"

#include <algorithm>

namespace kcm::cache {

void IndexKeySet::insert(const std::string* key) {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), std::string_view(*key), KeyPtrLess{});
  if (it != keys_.end() && **it == *key) return;
  keys_.insert(it, key);
}

bool IndexKeySet::erase(std::string_view key) {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key, KeyPtrLess{});
  if (it == keys_.end() || **it != key) return false;
  keys_.erase(it);
  // Give memory back once a set has shrunk to a quarter of what it holds room for, so a set that
  // was large once (a namespace emptied) does not keep its peak.
  if (keys_.capacity() > 16 && keys_.size() < keys_.capacity() / 4) keys_.shrink_to_fit();
  return true;
}

bool IndexKeySet::contains(std::string_view key) const {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key, KeyPtrLess{});
  return it != keys_.end() && **it == key;
}

void IndexKeySet::Sort() {
  std::sort(keys_.begin(), keys_.end(), KeyPtrLess{});
  keys_.erase(std::unique(keys_.begin(), keys_.end(),
                          [](const std::string* a, const std::string* b) { return *a == *b; }),
              keys_.end());
}

std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj) {
  return {obj.Meta().namespace_};
}

}  // namespace kcm::cache
