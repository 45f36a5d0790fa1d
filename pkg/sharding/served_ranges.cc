#include "pkg/sharding/served_ranges.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "pkg/sharding/shard_map.h"
#include "pkg/util/klog.h"

namespace kcm::sharding {
namespace {

bool Intersects(const std::vector<api::ShardRange>& a, const std::vector<api::ShardRange>& b) {
  for (const api::ShardRange& x : a) {
    for (const api::ShardRange& y : b) {
      if (!(y.last < x.first || y.first > x.last)) return true;
    }
  }
  return false;
}

api::ShardSelector Selector(const std::vector<api::ShardRange>& ranges) {
  return api::ShardSelector(api::ShardField::kNamespace, ranges);
}

// How long a stop waits for writes in flight before it says so in the log (and waits on).
constexpr Clock::duration kWriteWarnAfter = std::chrono::seconds(5);

}  // namespace

ServedRanges::ServedRanges(informers::SharedInformerFactory& factory,
                           std::shared_ptr<controller::NamespaceFence> fence,
                           std::stop_source controllers, std::function<void(Error)> failed)
    : factory_(factory),
      fence_(std::move(fence)),
      controllers_(std::move(controllers)),
      failed_(std::move(failed)) {}

void ServedRanges::Start(std::vector<api::ShardRange> ranges) {
  Set& set = sets_.emplace_back();
  set.ranges = std::move(ranges);
  set.name = "ranges-" + std::to_string(next_++);
  const api::ShardSelector shard = Selector(set.ranges);
  KLOG_INFOS("Serving shard ranges", "shardSelector", shard.String());
  // Open from the start: the ranges' previous owner has stopped writing to them before they were
  // handed over. What keeps a sync from acting on a half-listed namespace is the order of the
  // sources: a ReplicaSet arrives only once its pods are cached, a Deployment once both are.
  fence_->Open(set.ranges);
  set.sync = std::jthread([this, name = set.name, shard](std::stop_token stop) {
    Status s = factory_.AddShard(name, shard, stop);
    if (s.ok()) {
      KLOG_INFOS("Caches are synced", "shardSelector", shard.String());
    } else if (!stop.stop_requested()) {
      failed_(s.error());
    }
  });
}

void ServedRanges::Stop(std::list<Set>::iterator it) {
  const std::string selector = Selector(it->ranges).String();
  KLOG_INFOS("Stopping shard ranges", "shardSelector", selector);
  // No new write to the ranges from here, and none in flight once Close returns: the pods'
  // writes (a slow-start batch) are cancelled, the others (a status, a ReplicaSet) answered;
  // until they are, the ranges are not handed on.
  while (!fence_->Close(it->ranges, kWriteWarnAfter)) {
    KLOG_WARNINGS("Writes to stopped shard ranges still in flight", "shardSelector", selector);
  }
  it->sync.request_stop();
  if (it->sync.joinable()) it->sync.join();
  (void)factory_.RemoveShard(it->name);  // NotFound only if the factory never took it
  // Its ranges may be handed on from here: bench/sharding/move_bench.sh times a move from this
  // line to the new owner's "Caches are synced" of the same ranges.
  KLOG_INFOS("Stopped shard ranges", "shardSelector", selector);
  sets_.erase(it);
}

void ServedRanges::StopIntersecting(const std::vector<api::ShardRange>& ranges) {
  for (auto it = sets_.begin(); it != sets_.end();) {
    auto cur = it++;
    if (Intersects(cur->ranges, ranges)) Stop(cur);
  }
}

void ServedRanges::StopAll() {
  while (!sets_.empty()) Stop(sets_.begin());
}

void ServedRanges::Reconcile(const std::vector<api::ShardRange>& served) {
  std::vector<api::ShardRange> held;
  for (auto it = sets_.begin(); it != sets_.end();) {
    auto cur = it++;
    if (!Subtract(cur->ranges, served).empty()) {
      Stop(cur);
      continue;
    }
    held.insert(held.end(), cur->ranges.begin(), cur->ranges.end());
  }
  std::sort(held.begin(), held.end(),
            [](const api::ShardRange& x, const api::ShardRange& y) { return x.first < y.first; });
  // A set per range: a range lost later stops its own sources only, and the caches of the ranges
  // kept are not listed again.
  for (const api::ShardRange& r : Subtract(served, held)) Start({r});
}

}  // namespace kcm::sharding
