// ServeCalls: the serve calls of one replica (docs/design/sharding.md, "Serving a share"): each
// call serves one set of ranges on a thread of its own, until it is stopped — its token cancelled,
// which fences its writers, and its thread joined, so none of its writes is in flight — before any
// of its ranges is handed on. Thread-compatible (one replica's loop); `failed` runs on a call's
// thread.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <stop_token>
#include <thread>
#include <vector>

#include "pkg/api/shard_selector.h"
#include "pkg/util/result.h"

namespace kcm::sharding {

// Serves the namespaces `shard` selects until `stop` (which also fences its writes); returns
// before `stop` only when it failed.
using ServeFunc = std::function<Status(const api::ShardSelector& shard, std::stop_token stop)>;

class ServeCalls {
 public:
  // Calls kept side by side before they are joined into one (Reconcile).
  static constexpr size_t kMaxCalls = 4;

  // `failed`: a call returned before it was stopped (its error, or ServeStopped).
  ServeCalls(ServeFunc serve, std::function<void(Error)> failed);
  ~ServeCalls() { StopAll(); }
  ServeCalls(const ServeCalls&) = delete;
  ServeCalls& operator=(const ServeCalls&) = delete;

  // Serves exactly `served` (sorted, disjoint): stops each call holding anything else, then
  // starts one for what no call holds — or, with kMaxCalls running already, one for everything.
  void Reconcile(const std::vector<api::ShardRange>& served);
  // Stops (and joins) every call holding any of `ranges`.
  void StopIntersecting(const std::vector<api::ShardRange>& ranges);
  void StopAll();

 private:
  struct Call {
    std::vector<api::ShardRange> ranges;
    std::stop_source stop;
    std::jthread thread;
  };
  void Start(std::vector<api::ShardRange> ranges);
  void Stop(std::list<Call>::iterator it);

  const ServeFunc serve_;
  const std::function<void(Error)> failed_;
  std::list<Call> calls_;
};

}  // namespace kcm::sharding
