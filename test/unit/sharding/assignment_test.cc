#include "pkg/sharding/assignment.h"

#include <gtest/gtest.h>

namespace kcm::sharding {
namespace {

std::vector<uint64_t> Hashes(int n, const std::string& prefix = "ns-") {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(api::ShardHash(prefix + std::to_string(i)));
  return out;
}

// Namespaces per member under `p` (a Partition or a map's effective owners).
std::map<std::string, int> Counts(const Partition& p, const std::vector<uint64_t>& hashes) {
  auto m = ShardMap::FromEntries(p);
  EXPECT_TRUE(m.ok());
  std::map<std::string, int> out;
  for (uint64_t h : hashes) ++out[m->At(h).owner];
  return out;
}

// The trap of FNV-1a: "shard-1" … "shard-8" share their top 16 bits, so an equal split of the
// hash space would give all eight to one replica. Boundaries between observed hashes give 3/3/2.
TEST(AssignmentTest, BalancesClusteredNamesByObservedHashes) {
  const std::vector<uint64_t> hashes = Hashes(8, "shard-");
  const Partition p = DesiredPartition({"a", "b", "c"}, hashes, ShardMap());
  ASSERT_EQ(p.size(), 3u);
  const auto counts = Counts(p, hashes);
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [who, n] : counts) EXPECT_TRUE(n == 2 || n == 3) << who << " " << n;
  EXPECT_EQ(p.front().range.first, 0u);
  EXPECT_EQ(p.back().range.last, UINT64_MAX);
}

TEST(AssignmentTest, EdgeCases) {
  // No namespaces: one member serves the whole space (new namespaces land somewhere).
  Partition p = DesiredPartition({"b", "a"}, {}, ShardMap());
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].owner, "a");
  // Fewer namespaces than members: one run each, the rest idle.
  p = DesiredPartition({"a", "b", "c"}, Hashes(2), ShardMap());
  EXPECT_EQ(p.size(), 2u);
  // No members: nobody.
  p = DesiredPartition({}, Hashes(5), ShardMap());
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].owner, "");
}

// A run goes to whoever serves most of it now, so adding a member moves about a third.
TEST(AssignmentTest, KeepsRunsWithTheirCurrentServers) {
  const std::vector<uint64_t> hashes = Hashes(60);
  ShardMap map;
  ASSERT_TRUE(AssignFree(map, DesiredPartition({"a", "b"}, hashes, map), {"a", "b"}));
  const Partition three = DesiredPartition({"a", "b", "c"}, hashes, map);
  int moved = 0;
  for (uint64_t h : hashes) {
    auto m = ShardMap::FromEntries(three);
    if (m->At(h).owner != map.At(h).owner) ++moved;
  }
  EXPECT_LE(moved, 25) << "a third of 60 is 20";
}

TEST(AssignmentTest, UnbalancedNeedsARealDifference) {
  EXPECT_FALSE(Unbalanced({{"a", 10}, {"b", 10}, {"c", 10}}, 30));
  EXPECT_FALSE(Unbalanced({{"a", 11}, {"b", 10}, {"c", 9}}, 30));
  EXPECT_TRUE(Unbalanced({{"a", 20}, {"b", 10}, {"c", 0}}, 30));
  EXPECT_TRUE(Unbalanced({{"a", 2}, {"b", 0}}, 2));
  EXPECT_FALSE(Unbalanced({{"a", 1}, {"b", 0}}, 1));
  EXPECT_FALSE(Unbalanced({}, 0));
}

// A dead owner's ranges go straight to their desired owners; a live owner keeps its ranges.
TEST(AssignmentTest, AssignFreeTakesOnlyFromTheDead) {
  const std::vector<uint64_t> hashes = Hashes(30);
  ShardMap map;
  ASSERT_TRUE(AssignFree(map, DesiredPartition({"a", "b", "c"}, hashes, map), {"a", "b", "c"}));
  const ShardMap before = map;
  // c dies.
  const Partition desired = DesiredPartition({"a", "b"}, hashes, map);
  ASSERT_TRUE(AssignFree(map, desired, {"a", "b"}));
  for (uint64_t h : hashes) {
    const std::string& was = before.At(h).owner;
    const std::string& now = map.At(h).owner;
    if (was != "c") {
      EXPECT_EQ(now, was) << "a live owner lost a namespace";
    }
    EXPECT_NE(now, "c");
  }
  // Nothing more to do.
  EXPECT_FALSE(AssignFree(map, desired, {"a", "b"}));
}

// Rebalancing asks live owners to hand ranges on (next) and never reassigns them directly; the
// owner completes the handoff itself.
TEST(AssignmentTest, RebalanceGoesThroughHandoffs) {
  const std::vector<uint64_t> hashes = Hashes(30);
  ShardMap map;
  ASSERT_TRUE(AssignFree(map, DesiredPartition({"a"}, hashes, map), {"a"}));
  EXPECT_TRUE(Unbalanced(Load(map, {"a", "b", "c"}, hashes), hashes.size()));
  const Partition desired = DesiredPartition({"a", "b", "c"}, hashes, map);
  ASSERT_TRUE(Rebalance(map, desired, {"a", "b", "c"}));
  for (const ShardMapEntry& e : map.entries()) EXPECT_EQ(e.owner, "a");
  EXPECT_FALSE(Unbalanced(Load(map, {"a", "b", "c"}, hashes), hashes.size()));
  const auto served_before = map.Served("a");
  ASSERT_TRUE(CompleteHandoffs(map, "a"));
  for (const ShardMapEntry& e : map.entries()) EXPECT_TRUE(e.next.empty());
  const auto load = Load(map, {"a", "b", "c"}, hashes);
  for (const auto& [who, n] : load) EXPECT_EQ(n, 10) << who;
  EXPECT_EQ(map.Served("a"), served_before);
  EXPECT_FALSE(CompleteHandoffs(map, "a"));
}

// A handoff to a replica that died is dropped; the range stays with its owner.
TEST(AssignmentTest, HandoffToTheDeadIsDropped) {
  auto map = ShardMap::FromEntries({{{0, UINT64_MAX}, "a", "b"}});
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(AssignFree(*map, DesiredPartition({"a"}, Hashes(3), *map), {"a"}));
  EXPECT_EQ(map->entries().size(), 1u);
  EXPECT_EQ(map->entries()[0].owner, "a");
  EXPECT_EQ(map->entries()[0].next, "");
}

// A leaving replica gives its ranges to their pending next, else to the others' desired owner.
TEST(AssignmentTest, ReleaseHandsEverythingOn) {
  const std::vector<uint64_t> hashes = Hashes(30);
  ShardMap map;
  ASSERT_TRUE(AssignFree(map, DesiredPartition({"a", "b", "c"}, hashes, map), {"a", "b", "c"}));
  ASSERT_TRUE(Release(map, "b", DesiredPartition({"a", "c"}, hashes, map)));
  for (const ShardMapEntry& e : map.entries()) {
    EXPECT_NE(e.owner, "b");
    EXPECT_FALSE(e.owner.empty());
  }
  EXPECT_FALSE(Release(map, "b", DesiredPartition({"a", "c"}, hashes, map)));
  // The last replica leaves: nobody owns anything.
  ShardMap alone;
  ASSERT_TRUE(AssignFree(alone, DesiredPartition({"a"}, hashes, alone), {"a"}));
  ASSERT_TRUE(Release(alone, "a", DesiredPartition({}, hashes, alone)));
  EXPECT_EQ(alone, ShardMap());
}

}  // namespace
}  // namespace kcm::sharding
