#include "pkg/sharding/served_work.h"

#include <string_view>
#include <utility>

namespace kcm::sharding {

std::shared_ptr<void> ServedWork::Add(std::vector<std::shared_ptr<cache::Indexer>> caches) {
  std::list<Caches>::iterator it;
  {
    std::lock_guard lock(mu_);
    it = registered_.insert(registered_.end(), std::move(caches));
  }
  // The handle erases its entry; it must not outlive this ServedWork (the controllers end before
  // the ShardManager that owns their config).
  return std::shared_ptr<void>(nullptr, [this, it](void*) {
    std::lock_guard lock(mu_);
    registered_.erase(it);
  });
}

std::map<std::string, int64_t> ServedWork::Count() const {
  std::vector<std::shared_ptr<cache::Indexer>> caches;
  {
    std::lock_guard lock(mu_);
    for (const Caches& c : registered_) caches.insert(caches.end(), c.begin(), c.end());
  }
  // Listed without our lock: each cache takes its own.
  // Key by key (KeyListerGetter::ForEachKey), not a copy of every key at once: at 50,000 pods
  // that copy was the megabytes the relist avoids the same way.
  std::map<std::string, int64_t, std::less<>> out;
  for (const auto& cache : caches) {
    cache->ForEachKey([&out](const std::string& key) {
      const size_t slash = key.find('/');
      if (slash == std::string::npos) return;
      const std::string_view ns(key.data(), slash);
      if (auto it = out.find(ns); it != out.end()) {
        ++it->second;
      } else {
        out.emplace(std::string(ns), 1);
      }
    });
  }
  return {out.begin(), out.end()};
}

}  // namespace kcm::sharding
