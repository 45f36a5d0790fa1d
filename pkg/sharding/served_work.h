// ServedWork: the objects a replica's controllers hold in their informer caches, per namespace —
// what it publishes as its shard-work (shard_work.h, docs/design/sharding.md "Balance by work").
// The controllers register their pod and ReplicaSet caches for as long as they run; the
// ShardManager counts them at most every 10 s. Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/cache/indexer.h"

namespace kcm::sharding {

class ServedWork {
 public:
  // Counts `caches` (keys "<namespace>/<name>") until the returned handle is destroyed.
  [[nodiscard]] std::shared_ptr<void> Add(std::vector<std::shared_ptr<cache::Indexer>> caches);
  // Objects per namespace over every registered cache.
  std::map<std::string, int64_t> Count() const;

 private:
  using Caches = std::vector<std::shared_ptr<cache::Indexer>>;
  mutable std::mutex mu_;
  std::list<Caches> registered_;  // guarded by mu_
};

}  // namespace kcm::sharding
