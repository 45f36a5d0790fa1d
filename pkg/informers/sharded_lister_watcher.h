// ShardedListerWatcher: a ListerWatcher that asks the API server for one shard of a resource
// (the shardSelector list option, api::ShardSelector) and keeps only that shard itself as well.
// A server with the ShardedListAndWatch gate filters LIST and WATCH and echoes the selector in
// the list's metadata.shardInfo; an older server, or one with the gate off, ignores the option
// and answers everything — then the objects outside the shard are dropped here, so the informer
// above holds the shard either way (only the bytes on the wire differ). Thread-safety: as the
// ListerWatcher it wraps (one reflector thread).
#pragma once

#include <functional>
#include <memory>

#include "pkg/api/shard_selector.h"
#include "pkg/cache/listwatch.h"

namespace kcm::informers {

// Told after every LIST whether the server applied the selector (it echoed shardInfo).
using ShardFilterObserver = std::function<void(bool server_filters)>;

class ShardedListerWatcher final : public cache::ListerWatcher {
 public:
  ShardedListerWatcher(std::shared_ptr<cache::ListerWatcher> inner, api::ShardSelector selector,
                       ShardFilterObserver observer = {});

  Result<api::ObjectList> List(const api::ListOptions& options) override;
  Result<api::ObjectList> List(const api::ListOptions& options,
                               const cache::ListItemFunc& on_item) override;
  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions& options) override;

 private:
  api::ListOptions WithSelector(const api::ListOptions& options) const;
  void Observe(const api::ObjectList& list) const;

  std::shared_ptr<cache::ListerWatcher> inner_;
  const api::ShardSelector selector_;
  const std::string wire_;  // selector_.String()
  ShardFilterObserver observer_;
};

}  // namespace kcm::informers
