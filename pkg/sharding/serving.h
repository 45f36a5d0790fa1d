// Serving: what a replica's ShardManager asks of whatever serves its ranges of the namespace hash
// (the daemon's: ServedRanges). Thread-compatible: the ShardManager calls it from its own loop.
#pragma once

#include <vector>

#include "pkg/api/shard_selector.h"

namespace kcm::sharding {

class Serving {
 public:
  virtual ~Serving() = default;
  // Serves exactly `served` (sorted, disjoint) from now on: stops what is no longer in it,
  // starts what is new.
  virtual void Reconcile(const std::vector<api::ShardRange>& served) = 0;
  // Stops serving every range it serves that intersects `ranges`: once this returns, no write of
  // this replica to them is in flight, and they may be handed on.
  virtual void StopIntersecting(const std::vector<api::ShardRange>& ranges) = 0;
  // Stops serving everything, as StopIntersecting does.
  virtual void StopAll() = 0;
  // The replica stops serving for good (its member Lease is lost, or it stops): every write of
  // its controllers, waiting or in flight, whatever its namespace, is cancelled at once, before
  // StopAll waits for them.
  virtual void StopForGood() = 0;
};

}  // namespace kcm::sharding
