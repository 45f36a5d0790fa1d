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
  // The handle erases its entry; it must not outlive this ServedWork (the serve calls end before
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
  std::map<std::string, int64_t> out;
  for (const auto& cache : caches) {
    for (const std::string& key : cache->ListKeys()) {
      const size_t slash = key.find('/');
      if (slash == std::string::npos) continue;
      ++out[key.substr(0, slash)];
    }
  }
  return out;
}

}  // namespace kcm::sharding
