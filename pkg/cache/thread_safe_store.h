// ThreadSafeStore: the key-addressed map of immutable objects plus its indices, under one
// reader/writer lock (behaviour 5.1-5.3). All methods are safe for concurrent use; returned objects
// are shared and immutable, returned containers are copies.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/cache/index.h"
#include "pkg/util/result.h"

namespace kcm::cache {

class ThreadSafeStore {
 public:
  explicit ThreadSafeStore(Indexers indexers = {});

  // Add and Update are the same operation: store obj under key and re-index it. Update returns
  // the object it replaced (null if the key was new).
  void Add(const std::string& key, api::ObjectPtr obj);
  api::ObjectPtr Update(const std::string& key, api::ObjectPtr obj);
  void Delete(const std::string& key);
  api::ObjectPtr Get(const std::string& key) const;
  std::vector<api::ObjectPtr> List() const;
  std::vector<std::string> ListKeys() const;
  // Each key, built in one reused string, under the read lock: fn must not call into the store.
  void ForEachKey(const std::function<void(const std::string&)>& fn) const;
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
  // Moves item from the old object's index values to the new object's; either may be null. item
  // is held by items_ (the indices point at it), so it must stay there until the indices no longer
  // list it.
  void UpdateIndicesLocked(const api::Object* old_obj, const api::Object* new_obj,
                           const StoreItem* item);
  static void UpdateOneIndex(cache::Index& index, const std::vector<std::string>& old_values,
                             const std::vector<std::string>& new_values, const StoreItem* item);
  // The item for key and obj: the object alone when it spells the key, else with a copy of it.
  static StoreItem MakeItem(const std::string& key, api::ObjectPtr obj);
  std::vector<api::ObjectPtr> ObjectsForKeysLocked(const IndexKeySet& keys) const;
  // Indexes every item with fn into index (empty before), in one pass and one sort per key set.
  void BuildIndexLocked(cache::Index& index, const IndexFunc& fn) const;

  mutable std::shared_mutex mu_;
  // Hashes and compares items by key, and finds them by a key given as text.
  struct ItemHash {
    using is_transparent = void;
    size_t operator()(const StoreItem& item) const noexcept { return HashKeyText(item.Key()); }
    size_t operator()(std::string_view key) const noexcept { return HashKeyText(key); }
  };
  struct ItemEq {
    using is_transparent = void;
    static KeyText View(const StoreItem& item) { return item.Key(); }
    static KeyText View(std::string_view key) { return key; }
    bool operator()(const auto& a, const auto& b) const { return View(a) == View(b); }
  };
  // Node-based: an item's address is stable from insertion to erase (rehashing moves no node),
  // which is what the indices' pointers rely on. No key string: an item's key is its object's
  // namespace/name (StoreItem), ≈ 48 B of key and 32 B of node less per object than a map from
  // key strings. The nodes come from a pool of their own: a 32-byte node is a 48-byte malloc
  // chunk (header and rounding), a 32-byte pool block (docs/design/cache-memory.md).
  // Erased nodes stay in the pool for the next inserts; Replace starts a new pool.
  struct ItemSet {
    // Chunks of at most 1,024 nodes (32 KiB): the pool's default doubling would leave up to half
    // of its last chunk unused at 50,000 items.
    std::pmr::unsynchronized_pool_resource pool{{.max_blocks_per_chunk = 1024}};
    std::pmr::unordered_set<StoreItem, ItemHash, ItemEq> set{&pool};
  };
  std::unique_ptr<ItemSet> items_ = std::make_unique<ItemSet>();
  Indexers indexers_;
  Indices indices_;
};

}  // namespace kcm::cache
