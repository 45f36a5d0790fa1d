#include "pkg/informers/sharded_lister_watcher.h"

#include <utility>

#include "pkg/util/klog.h"

namespace kcm::informers {
namespace {

// Drops the events of objects outside the shard. Bookmarks and errors pass: they carry the
// stream's progress and failures, not an object of the shard.
class ShardedWatch final : public cache::WatchInterface {
 public:
  ShardedWatch(std::unique_ptr<cache::WatchInterface> inner, const api::ShardSelector& selector)
      : inner_(std::move(inner)), selector_(selector) {}

  Result<std::optional<api::WatchEvent>> Next() override {
    for (;;) {
      auto event = inner_->Next();
      if (!event.ok() || !event->has_value()) return event;
      const api::WatchEvent& e = **event;
      const bool object_event = e.type == api::WatchEventType::kAdded ||
                                e.type == api::WatchEventType::kModified ||
                                e.type == api::WatchEventType::kDeleted;
      if (!object_event || e.object == nullptr || selector_.Matches(*e.object)) return event;
    }
  }
  std::size_t buffered_events() const override { return inner_->buffered_events(); }
  void Stop() override { inner_->Stop(); }

 private:
  std::unique_ptr<cache::WatchInterface> inner_;
  const api::ShardSelector& selector_;  // the ShardedListerWatcher's, which outlives its watches
};

}  // namespace

ShardedListerWatcher::ShardedListerWatcher(std::shared_ptr<cache::ListerWatcher> inner,
                                           api::ShardSelector selector,
                                           ShardFilterObserver observer)
    : inner_(std::move(inner)),
      selector_(std::move(selector)),
      wire_(selector_.String()),
      observer_(std::move(observer)) {}

api::ListOptions ShardedListerWatcher::WithSelector(const api::ListOptions& options) const {
  api::ListOptions o = options;
  o.shard_selector = wire_;
  return o;
}

void ShardedListerWatcher::Observe(const api::ObjectList& list) const {
  // An empty echo: the server ignored the option (it is older than the field, or its
  // ShardedListAndWatch gate is off). A different echo would be a server bug; either way the
  // items were filtered here too.
  const bool server_filters = list.shard_selector == wire_;
  if (!list.shard_selector.empty() && !server_filters) {
    KLOG_WARNINGS("The API server echoed another shard selector; filtering on our side", "echoed",
                  list.shard_selector, "sent", wire_);
  }
  if (observer_) observer_(server_filters);
}

Result<api::ObjectList> ShardedListerWatcher::List(const api::ListOptions& options) {
  return List(options, {});
}

Result<api::ObjectList> ShardedListerWatcher::List(const api::ListOptions& options,
                                                   const cache::ListItemFunc& on_item) {
  // A null item starts a new answer (api::ListItemFunc): passed on as it is. An item outside
  // the shard is taken (null returned), so the list does not keep it.
  cache::ListItemFunc filter = [&](api::ObjectPtr item) -> api::ObjectPtr {
    if (item != nullptr && !selector_.Matches(*item)) return nullptr;
    return on_item ? on_item(std::move(item)) : item;
  };
  Result<api::ObjectList> list = inner_->List(WithSelector(options), filter);
  if (list.ok()) Observe(*list);
  return list;
}

Result<std::unique_ptr<cache::WatchInterface>> ShardedListerWatcher::Watch(
    const api::ListOptions& options) {
  auto watch = inner_->Watch(WithSelector(options));
  if (!watch.ok()) return watch.error();
  return std::unique_ptr<cache::WatchInterface>(
      std::make_unique<ShardedWatch>(std::move(*watch), selector_));
}

}  // namespace kcm::informers
