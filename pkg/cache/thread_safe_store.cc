#include "pkg/cache/thread_safe_store.h"

#include <algorithm>
#include <mutex>
#include <set>

namespace kcm::cache {
namespace {

Error IndexNotFound(const std::string& name) {
  return Error::Local("IndexNotFound", "index with name \"" + name + "\" does not exist");
}

}  // namespace

ThreadSafeStore::ThreadSafeStore(Indexers indexers) : indexers_(std::move(indexers)) {}

void ThreadSafeStore::Add(const std::string& key, api::ObjectPtr obj) {
  Update(key, std::move(obj));
}

StoreItem ThreadSafeStore::MakeItem(const std::string& key, api::ObjectPtr obj) {
  StoreItem item{std::move(obj), nullptr};
  if (!(ObjectKeyText(*item.obj) == KeyText(key))) {
    item.own_key = std::make_unique<const std::string>(key);
  }
  return item;
}

api::ObjectPtr ThreadSafeStore::Update(const std::string& key, api::ObjectPtr obj) {
  std::unique_lock lock(mu_);
  auto it = items_->set.find(std::string_view(key));
  if (it == items_->set.end()) {
    it = items_->set.insert(MakeItem(key, obj)).first;
    UpdateIndicesLocked(nullptr, obj.get(), &*it);
    return nullptr;
  }
  // Hold the old object until re-indexing is done; its index values are computed from it. The
  // key's text stays; whether the new object spells it may not (own_key follows).
  api::ObjectPtr old = std::exchange(it->obj, obj);
  if (ObjectKeyText(*obj) == KeyText(key)) {
    it->own_key.reset();
  } else if (!it->own_key) {
    it->own_key = std::make_unique<const std::string>(key);
  }
  UpdateIndicesLocked(old.get(), obj.get(), &*it);
  return old;
}

void ThreadSafeStore::Delete(const std::string& key) {
  std::unique_lock lock(mu_);
  auto it = items_->set.find(std::string_view(key));
  if (it == items_->set.end()) {
    return;
  }
  UpdateIndicesLocked(it->obj.get(), nullptr, &*it);
  items_->set.erase(it);
}

api::ObjectPtr ThreadSafeStore::Get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = items_->set.find(std::string_view(key));
  return it == items_->set.end() ? nullptr : it->obj;
}

std::vector<api::ObjectPtr> ThreadSafeStore::List() const {
  std::shared_lock lock(mu_);
  std::vector<api::ObjectPtr> out;
  out.reserve(items_->set.size());
  for (const StoreItem& item : items_->set) {
    out.push_back(item.obj);
  }
  return out;
}

std::vector<std::string> ThreadSafeStore::ListKeys() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  out.reserve(items_->set.size());
  for (const StoreItem& item : items_->set) {
    out.push_back(item.Key().str());
  }
  return out;
}

void ThreadSafeStore::ForEachKey(const std::function<void(const std::string&)>& fn) const {
  std::shared_lock lock(mu_);
  std::string key;
  for (const StoreItem& item : items_->set) {
    const KeyText text = item.Key();
    key.assign(text.first).append(text.second).append(text.third);
    fn(key);
  }
}

void ThreadSafeStore::Replace(std::unordered_map<std::string, api::ObjectPtr> items) {
  std::unique_lock lock(mu_);
  // The indices point at the old items: drop them first.
  indices_.clear();
  // A new pool too, so that a relist that shrank the cache leaves no free nodes behind.
  auto fresh = std::make_unique<ItemSet>();
  fresh->set.reserve(items.size());
  for (auto& [key, obj] : items) fresh->set.insert(MakeItem(key, std::move(obj)));
  items_ = std::move(fresh);
  for (const auto& [name, fn] : indexers_) BuildIndexLocked(indices_[name], fn);
}

void ThreadSafeStore::BuildIndexLocked(cache::Index& index, const IndexFunc& fn) const {
  // The items come in hash order: append, then sort each key set once (inserting in order would
  // move half a set's pointers per key).
  for (const StoreItem& item : items_->set) {
    for (const std::string& value : fn(*item.obj)) {
      auto set = index.find(value);
      if (set == index.end()) set = index.emplace(value, IndexKeySet{}).first;
      set->second.push_back_unsorted(&item);
    }
  }
  for (auto& [value, keys] : index) {
    keys.Sort();
    keys.ShrinkToFit();  // the sets live until the next rebuild
  }
}

Result<std::vector<api::ObjectPtr>> ThreadSafeStore::Index(const std::string& index_name,
                                                           const api::Object& obj) const {
  std::shared_lock lock(mu_);
  auto fn = indexers_.find(index_name);
  if (fn == indexers_.end()) {
    return IndexNotFound(index_name);
  }
  IndexKeySet keys;
  auto index = indices_.find(index_name);
  if (index != indices_.end()) {
    for (const std::string& value : fn->second(obj)) {
      auto set = index->second.find(value);
      if (set != index->second.end()) {
        for (const StoreItem* item : set->second) keys.push_back_unsorted(item);
      }
    }
  }
  keys.Sort();  // the union of the values' sets, each key once
  return ObjectsForKeysLocked(keys);
}

Result<std::vector<std::string>> ThreadSafeStore::IndexKeys(const std::string& index_name,
                                                            const std::string& value) const {
  std::shared_lock lock(mu_);
  if (!indexers_.contains(index_name)) {
    return IndexNotFound(index_name);
  }
  std::vector<std::string> out;
  auto index = indices_.find(index_name);
  if (index != indices_.end()) {
    auto set = index->second.find(value);
    if (set != index->second.end()) {
      out.reserve(set->second.size());
      for (const StoreItem* item : set->second) {
        out.push_back(item->Key().str());
      }
    }
  }
  return out;
}

std::vector<std::string> ThreadSafeStore::ListIndexFuncValues(const std::string& index_name) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  auto index = indices_.find(index_name);
  if (index != indices_.end()) {
    for (const auto& [value, keys] : index->second) {
      out.push_back(value);
    }
  }
  return out;
}

Result<std::vector<api::ObjectPtr>> ThreadSafeStore::ByIndex(const std::string& index_name,
                                                             const std::string& value) const {
  std::shared_lock lock(mu_);
  if (!indexers_.contains(index_name)) {
    return IndexNotFound(index_name);
  }
  auto index = indices_.find(index_name);
  if (index == indices_.end()) {
    return std::vector<api::ObjectPtr>{};
  }
  auto set = index->second.find(value);
  if (set == index->second.end()) {
    return std::vector<api::ObjectPtr>{};
  }
  return ObjectsForKeysLocked(set->second);
}

Indexers ThreadSafeStore::GetIndexers() const {
  std::shared_lock lock(mu_);
  return indexers_;
}

Status ThreadSafeStore::AddIndexers(const Indexers& new_indexers) {
  std::unique_lock lock(mu_);
  for (const auto& [name, fn] : new_indexers) {
    if (indexers_.contains(name)) {
      return Error::Local("IndexConflict", "indexer conflict: \"" + name + "\" already exists");
    }
  }
  for (const auto& [name, fn] : new_indexers) {
    indexers_.emplace(name, fn);
    // Existing items must be findable through the new index at once.
    BuildIndexLocked(indices_[name], fn);
  }
  return OkStatus();
}

void ThreadSafeStore::UpdateIndicesLocked(const api::Object* old_obj, const api::Object* new_obj,
                                          const StoreItem* item) {
  for (const auto& [name, fn] : indexers_) {
    std::vector<std::string> old_values = old_obj ? fn(*old_obj) : std::vector<std::string>{};
    std::vector<std::string> new_values = new_obj ? fn(*new_obj) : std::vector<std::string>{};
    // Most updates (status changes) keep every index value; skip the map work for them.
    if (old_values == new_values && old_obj != nullptr && new_obj != nullptr) {
      continue;
    }
    UpdateOneIndex(indices_[name], old_values, new_values, item);
  }
}

void ThreadSafeStore::UpdateOneIndex(cache::Index& index,
                                     const std::vector<std::string>& old_values,
                                     const std::vector<std::string>& new_values,
                                     const StoreItem* item) {
  for (const std::string& value : old_values) {
    auto set = index.find(value);
    if (set == index.end()) {
      continue;
    }
    set->second.erase(item->Key());  // by the key's text
    // Empty sets are dropped so that values of deleted objects do not accumulate (behaviour 5.2).
    if (set->second.empty()) {
      index.erase(set);
    }
  }
  for (const std::string& value : new_values) {
    auto set = index.find(value);
    if (set == index.end()) {
      set = index.emplace(value, IndexKeySet{}).first;
    }
    set->second.insert(item);
  }
}

std::vector<api::ObjectPtr> ThreadSafeStore::ObjectsForKeysLocked(const IndexKeySet& keys) const {
  std::vector<api::ObjectPtr> out;
  out.reserve(keys.size());
  for (const StoreItem* item : keys) out.push_back(item->obj);  // indices list only stored items
  return out;
}

}  // namespace kcm::cache
