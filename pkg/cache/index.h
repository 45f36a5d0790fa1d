// Index functions and the maps an Indexer keeps (behaviour 5.2, 5.4). Type definitions and pure
// functions only; safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/object.h"

namespace kcm::cache {

// Computes the values under which an object is indexed. Must be pure and must not throw.
using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;

// Index name → function.
using Indexers = std::map<std::string, IndexFunc>;
// Orders key pointers by the keys they point at; also compares them with a key given by value.
struct KeyPtrLess {
  using is_transparent = void;
  static std::string_view View(const std::string* key) { return *key; }
  static std::string_view View(std::string_view key) { return key; }
  bool operator()(const auto& a, const auto& b) const { return View(a) < View(b); }
};
// The keys under one indexed value, in key order. Each points at the store's own copy of the key
// (ThreadSafeStore's item map), so a key is held once however many index values list it: at
// 50,000 cached pods with two indices that is 100,000 key strings fewer.
using IndexKeySet = std::set<const std::string*, KeyPtrLess>;
// Indexed value → keys of the objects that produce it.
using Index = std::map<std::string, IndexKeySet, std::less<>>;
// Index name → index.
using Indices = std::map<std::string, Index>;

// The standard index every informer offers (behaviour 5.4).
inline constexpr char kNamespaceIndex[] = "namespace";

// Indexes an object by its namespace (a cluster-scoped object is indexed under "").
std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj);

}  // namespace kcm::cache
