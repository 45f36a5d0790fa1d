// ThreadSafeStore: the key-addressed map of immutable objects plus its indices, under one
// reader/writer lock (behaviour 5.1-5.3). All methods are safe for concurrent use; returned objects
// are shared and immutable, returned containers are copies.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/cache/index.h"
#include "pkg/util/result.h"

namespace kcm::cache {

class ThreadSafeStore {
 public:
  explicit ThreadSafeStore(Indexers indexers = {});

  // Add and Update are the same operation: store obj under key and re-index it.
  void Add(const std::string& key, api::ObjectPtr obj);
  void Update(const std::string& key, api::ObjectPtr obj);
  void Delete(const std::string& key);
  api::ObjectPtr Get(const std::string& key) const;
  std::vector<api::ObjectPtr> List() const;
  std::vector<std::string> ListKeys() const;
  // Swaps in new content and rebuilds every index.
  void Replace(std::unordered_map<std::string, api::ObjectPtr> items);

  Result<std::vector<api::ObjectPtr>> Index(const std::string& index_name,
                                            const api::Object& obj) const;
  Result<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                             const std::string& value) const;
  std::vector<std::string> ListIndexFuncValues(const std::string& index_name) const;
  Result<std::vector<api::ObjectPtr>> ByIndex(const std::string& index_name,
                                              const std::string& value) const;
  Indexers GetIndexers() const;
  Status AddIndexers(const Indexers& new_indexers);

 private:
  // Moves key from the old object's index values to the new object's; either may be null. key is
  // the key held by items_ (the indices point at it), so it must stay there until the indices no
  // longer list it.
  void UpdateIndicesLocked(const api::Object* old_obj, const api::Object* new_obj,
                           const std::string* key);
  static void UpdateOneIndex(cache::Index& index, const std::vector<std::string>& old_values,
                             const std::vector<std::string>& new_values, const std::string* key);
  std::vector<api::ObjectPtr> ObjectsForKeysLocked(const IndexKeySet& keys) const;
  // Indexes every item with fn into index (empty before), in one pass and one sort per key set.
  void BuildIndexLocked(cache::Index& index, const IndexFunc& fn) const;

  mutable std::shared_mutex mu_;
  // Node-based: a key's address is stable from insertion to erase (rehashing moves no node), which
  // is what the indices' key pointers rely on.
  std::unordered_map<std::string, api::ObjectPtr> items_;
  Indexers indexers_;
  Indices indices_;
};

}  // namespace kcm::cache
