// LruCache: a fixed-capacity map that evicts the least recently used key (groupcache/lru, as the
// upstream event correlator uses). Not thread-safe: the owner locks.
#pragma once

#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

namespace kcm::record {

template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The value for `key`, marked most recently used; nullptr when absent.
  V* Get(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  // Inserts or replaces; evicts the least recently used entry beyond capacity.
  void Add(const std::string& key, V value) {
    if (V* existing = Get(key); existing != nullptr) {
      *existing = std::move(value);
      return;
    }
    entries_.emplace_front(key, std::move(value));
    index_.emplace(key, entries_.begin());
    if (entries_.size() > capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
  }

  size_t size() const { return entries_.size(); }

 private:
  using Entry = std::pair<std::string, V>;
  size_t capacity_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace kcm::record
