// Balance by work (docs/design/sharding.md, "Balance by work"): where the coordinator places range
// boundaries when replicas publish the work they serve (ShardWork), and when it re-places them.
// Pure functions and a small gate; thread-compatible.
//
// A namespace weighs 1 + its pods + its ReplicaSets, as its server publishes them; unpublished
// namespaces weigh 1, so a quiet cluster splits by namespace count (DesiredPartition). With work
// published, the sorted namespace hashes are cut into about four runs per replica of even weight
// (a namespace heavier than a run is a run of its own), and the runs go, heaviest first, to the
// replica that serves most of their weight when it stays near its even share, else to the
// replica with the least weight so far: so a replica may serve a few ranges (each a source of
// its caches), and a busy namespace may be a range of its own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/sharding/assignment.h"
#include "pkg/sharding/shard_map.h"
#include "pkg/sharding/shard_work.h"
#include "pkg/util/clock.h"

namespace kcm::sharding {

struct NamespaceWeight {
  uint64_t hash;   // api::ShardHash of the namespace
  int64_t weight;  // >= 1
};

// The weight of each of `hashes` (sorted, distinct: the namespaces that exist) from the work each
// member published (`work`, by identity): a listed namespace weighs what its publisher says (the
// largest, if several list it); the unlisted namespaces of a member's ranges in `map` share its
// "rest"; any other namespace weighs 1.
std::vector<NamespaceWeight> WeighNamespaces(const std::vector<uint64_t>& hashes,
                                             const std::map<std::string, ShardWork>& work,
                                             const ShardMap& map);

// The desired partition by weight (see above); `weights` sorted by hash. Each entry's `owner` is
// a member ("" only when there are none); neighbouring runs of one member are joined.
Partition WeightedPartition(const std::set<std::string>& members,
                            const std::vector<NamespaceWeight>& weights, const ShardMap& current);

// Weight per live member in `map` (for the replica that will serve it: `next` when a handoff is
// pending, else `owner`); members that serve none are listed with 0.
std::map<std::string, int64_t> WorkLoad(const ShardMap& map, const std::set<std::string>& live,
                                        const std::vector<NamespaceWeight>& weights);

// Whether the busiest member's share of the summed weight exceeds its even share by more than a
// fifth.
bool WorkUnbalanced(const std::map<std::string, int64_t>& load);

// Where the ranges should go: by weight when members published work (`work` holds only
// annotations that parsed) and some namespace weighs more than 1, else by namespace count
// (DesiredPartition). `hashes` sorted, distinct.
struct Placement {
  Partition desired;
  std::vector<NamespaceWeight> weights;  // empty when the cluster is quiet
};
Placement Place(const std::set<std::string>& members, const std::vector<uint64_t>& hashes,
                const std::map<std::string, ShardWork>& work, const ShardMap& map);
// Whether the load of `next` among `members` is uneven: WorkUnbalanced by the placement's
// weights, or, when there are none, Unbalanced by namespace count.
bool Uneven(const Placement& placement, const ShardMap& next, const std::set<std::string>& members,
            const std::vector<uint64_t>& hashes);

// Hysteresis of re-placing: due only once the load has been uneven on every pass for the hold
// (three retry periods at first), so a load that wobbles around the threshold, or a move that is
// still settling, does not make the map change again and again. Each due answer by work doubles
// the hold, up to kMaxHoldFactor times the first: while a cluster grows its pods appear faster
// than moves settle, and every move re-lists the moved range (a 150,000-pod run re-placed every
// 13 s, docs/benchmarks/sharding.md). The hold falls back to the first once the load has stayed
// even for the longest hold, on a due answer by namespace count (a quiet cluster), when the
// members change (a replica joined or left: a new one gets its share after the first hold), and on
// Reset (not coordinating).
class RebalanceGate {
 public:
  static constexpr int kMaxHoldFactor = 32;
  explicit RebalanceGate(Clock::duration hold) : first_hold_(hold), hold_(hold) {}
  // One pass: whether to re-place now; `by_work`: the placement weighs published work. Restarts
  // the hold after each due answer and whenever the load is even.
  bool Due(bool unbalanced, bool by_work, Clock::time_point now);
  // Each pass while coordinating, before Due: resets the gate when `members` differs from the
  // last pass's.
  void SeeMembers(const std::set<std::string>& members);
  Clock::duration hold() const { return hold_; }
  void Reset();

 private:
  const Clock::duration first_hold_;
  Clock::duration hold_;
  std::optional<Clock::time_point> uneven_since_;
  std::optional<Clock::time_point> even_since_;
  std::set<std::string> members_;
};

}  // namespace kcm::sharding
