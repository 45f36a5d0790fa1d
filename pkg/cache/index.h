// Index functions and the maps an Indexer keeps (behaviour 5.2, 5.4). Type definitions and pure
// functions only; safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pkg/api/object.h"

namespace kcm::cache {

// Computes the values under which an object is indexed. Must be pure and must not throw.
using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;

// Index name → function.
using Indexers = std::map<std::string, IndexFunc>;
// Indexed value → keys of the objects that produce it.
using Index = std::map<std::string, std::set<std::string>>;
// Index name → index.
using Indices = std::map<std::string, Index>;

// The standard index every informer offers (behaviour 5.4).
inline constexpr char kNamespaceIndex[] = "namespace";

// Indexes an object by its namespace (a cluster-scoped object is indexed under "").
std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj);

}  // namespace kcm::cache
