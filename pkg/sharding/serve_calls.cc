#include "pkg/sharding/serve_calls.h"

#include <algorithm>
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

std::string Describe(const std::vector<api::ShardRange>& ranges) {
  return api::ShardSelector(api::ShardField::kNamespace, ranges).String();
}

}  // namespace

ServeCalls::ServeCalls(ServeFunc serve, std::function<void(Error)> failed)
    : serve_(std::move(serve)), failed_(std::move(failed)) {}

void ServeCalls::Start(std::vector<api::ShardRange> ranges) {
  Call& c = calls_.emplace_back();
  c.ranges = std::move(ranges);
  api::ShardSelector shard(api::ShardField::kNamespace, c.ranges);
  KLOG_INFOS("Serving shard ranges", "shardSelector", shard.String());
  c.thread = std::jthread([this, shard, token = c.stop.get_token()] {
    Status st = serve_(shard, token);
    if (token.stop_requested()) return;
    failed_(st.ok() ? Error::Local("ServeStopped",
                                   "serving " + shard.String() + " returned before stop")
                    : st.error());
  });
}

void ServeCalls::Stop(std::list<Call>::iterator it) {
  KLOG_INFOS("Stopping shard ranges", "shardSelector", Describe(it->ranges));
  it->stop.request_stop();
  it->thread.join();  // none of its writes is in flight after this
  // Its ranges may be handed on from here: bench/sharding/move_bench.sh times a move from this
  // line to the new owner's "Caches are synced" of the same ranges.
  KLOG_INFOS("Stopped shard ranges", "shardSelector", Describe(it->ranges));
  calls_.erase(it);
}

void ServeCalls::StopIntersecting(const std::vector<api::ShardRange>& ranges) {
  for (auto it = calls_.begin(); it != calls_.end();) {
    auto cur = it++;
    if (Intersects(cur->ranges, ranges)) Stop(cur);
  }
}

void ServeCalls::StopAll() {
  while (!calls_.empty()) Stop(calls_.begin());
}

void ServeCalls::Reconcile(const std::vector<api::ShardRange>& served) {
  std::vector<api::ShardRange> held;
  for (auto it = calls_.begin(); it != calls_.end();) {
    auto cur = it++;
    if (!Subtract(cur->ranges, served).empty()) {
      Stop(cur);
      continue;
    }
    held.insert(held.end(), cur->ranges.begin(), cur->ranges.end());
  }
  std::sort(held.begin(), held.end(),
            [](const api::ShardRange& x, const api::ShardRange& y) { return x.first < y.first; });
  std::vector<api::ShardRange> missing = Subtract(served, held);
  if (missing.empty()) return;
  if (calls_.size() >= kMaxCalls) {
    // Each call holds its own informers (three watches) and workers: after many changes of
    // membership, serve everything through one call again, at the cost of one relist.
    KLOG_INFOS("Serving ranges through one set of informers again", "ranges", served.size());
    StopAll();
    Start(served);
  } else {
    Start(std::move(missing));
  }
}

}  // namespace kcm::sharding
