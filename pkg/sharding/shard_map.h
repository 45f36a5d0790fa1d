// ShardMap: which replica serves which range of the namespace hash space (api::ShardSelector's
// ranges), as the replicas of `--sharding=namespace` keep it in one Lease's annotation. The
// entries are sorted, disjoint and cover the whole space [0, 2^64). Each has an `owner` (the only
// replica that may serve and write the namespaces hashing into it; "" = nobody) and a `next`
// (the replica the owner is asked to hand it to; "" = none). Every change is a compare-and-swap of
// the one Lease, so two replicas never both believe they own a point
// (docs/design/sharding.md). Plain data; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/shard_selector.h"
#include "pkg/util/result.h"

namespace kcm::sharding {

struct ShardMapEntry {
  api::ShardRange range;
  std::string owner;
  std::string next;
  friend bool operator==(const ShardMapEntry&, const ShardMapEntry&) = default;
};

class ShardMap {
 public:
  // One entry over the whole space, owned by nobody.
  ShardMap();
  // Errors: the entries are not sorted, overlap, leave a gap or do not cover the whole space.
  static Result<ShardMap> FromEntries(std::vector<ShardMapEntry> entries);
  // The annotation's JSON: {"ranges":[{"start":"0x…","end":"0x…","owner":"…","next":"…"}]},
  // bounds as in a shard selector (end exclusive, 0x10000000000000000 at the top).
  static Result<ShardMap> Parse(std::string_view json);
  std::string Serialize() const;

  const std::vector<ShardMapEntry>& entries() const { return entries_; }
  std::vector<ShardMapEntry>& mutable_entries() { return entries_; }

  // Splits entries so that each point of `points` starts an entry (same owner and next on both
  // sides: ownership of no hash changes).
  void SplitAt(const std::vector<uint64_t>& points);
  // Joins neighbours with the same owner and next (ownership of no hash changes).
  void Merge();
  // The ranges `owner` serves: its entries with no pending handoff, neighbours joined.
  std::vector<api::ShardRange> Served(std::string_view owner) const;
  // The entry holding `hash`.
  const ShardMapEntry& At(uint64_t hash) const;

  friend bool operator==(const ShardMap&, const ShardMap&) = default;

 private:
  std::vector<ShardMapEntry> entries_;
};

// Joins adjacent ranges of a sorted list.
std::vector<api::ShardRange> JoinAdjacent(std::vector<api::ShardRange> ranges);
// The parts of `a` not covered by `b` (both sorted, disjoint), sorted.
std::vector<api::ShardRange> Subtract(const std::vector<api::ShardRange>& a,
                                      const std::vector<api::ShardRange>& b);

}  // namespace kcm::sharding
