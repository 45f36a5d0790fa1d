// Index functions and the maps an Indexer keeps (behaviour 5.2, 5.4). Type definitions and pure
// functions only; safe from any thread.
#pragma once

#include <functional>
#include <map>
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
// The keys under one indexed value, in key order: a sorted vector of pointers at the store's own
// copy of each key (ThreadSafeStore's item map), so a key is held once however many index values
// list it, and each listing costs one pointer — not a tree node (48 B), which at 50,000 cached
// pods with two indices was 4.6 MiB (docs/benchmarks.md, "Daemon at scale"). Inserting or erasing
// moves the pointers after the position: O(n) in the set's size, a memmove of 8 B per key (at
// 50,000 keys in one namespace ≈ 200 kB, tens of microseconds), where a tree is O(log n).
class IndexKeySet {
 public:
  using const_iterator = std::vector<const std::string*>::const_iterator;

  // Adds `key` (the store's own string) unless a key with its text is present.
  void insert(const std::string* key);
  // Removes the key with this text; false when absent.
  bool erase(std::string_view key);
  bool contains(std::string_view key) const;
  // Appends without ordering; Sort() must follow before any other call (bulk index rebuilds).
  void push_back_unsorted(const std::string* key) { keys_.push_back(key); }
  void Sort();

  const_iterator begin() const { return keys_.begin(); }
  const_iterator end() const { return keys_.end(); }
  size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

 private:
  std::vector<const std::string*> keys_;  // sorted by the key text, texts unique
};
// Indexed value → keys of the objects that produce it.
using Index = std::map<std::string, IndexKeySet, std::less<>>;
// Index name → index.
using Indices = std::map<std::string, Index>;

// The standard index every informer offers (behaviour 5.4).
inline constexpr char kNamespaceIndex[] = "namespace";

// Indexes an object by its namespace (a cluster-scoped object is indexed under "").
std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj);

}  // namespace kcm::cache
