#include "pkg/sharding/work_balance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace kcm::sharding {
namespace {

const std::set<std::string> kMembers = {"a", "b", "c"};

// The namespaces and the work `publisher` reports for them.
struct Cluster {
  std::vector<uint64_t> hashes;
  std::map<std::string, ShardWork> work;
};

Cluster Build(const std::map<std::string, int64_t>& objects, const std::string& publisher = "a") {
  Cluster c;
  for (const auto& [ns, n] : objects) c.hashes.push_back(api::ShardHash(ns));
  std::sort(c.hashes.begin(), c.hashes.end());
  c.work[publisher] = ShardWorkOf(objects);
  return c;
}

ShardMap MapOf(const Partition& p) {
  auto m = ShardMap::FromEntries(p);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().ToString());
  return m.ok() ? *m : ShardMap();
}

double BusiestShare(const std::map<std::string, int64_t>& load) {
  int64_t total = 0, busiest = 0;
  for (const auto& [who, w] : load) total += w, busiest = std::max(busiest, w);
  return static_cast<double>(busiest) / static_cast<double>(total);
}

// Three namespaces of 40 pods and nine of 4: by count each replica would get four namespaces and
// one of them two busy ones (about half the work); by weight none carries much over a third.
TEST(WorkBalanceTest, SkewedWorkIsSpreadByWeight) {
  for (int set = 0; set < 20; ++set) {
    SCOPED_TRACE(set);
    std::map<std::string, int64_t> objects;
    for (int i = 0; i < 3; ++i)
      objects["busy-" + std::to_string(set) + "-" + std::to_string(i)] = 40;
    for (int i = 0; i < 9; ++i)
      objects["calm-" + std::to_string(set) + "-" + std::to_string(i)] = 4;
    const Cluster c = Build(objects);
    const Placement p = Place(kMembers, c.hashes, c.work, ShardMap());
    const std::vector<NamespaceWeight> weights = WeighNamespaces(c.hashes, c.work, ShardMap());
    const auto load = WorkLoad(MapOf(p.desired), kMembers, weights);
    EXPECT_EQ(load.size(), 3u);
    EXPECT_LE(BusiestShare(load), 0.40);
    EXPECT_FALSE(WorkUnbalanced(load));
  }
}

TEST(WorkBalanceTest, EvenWorkGivesEvenShares) {
  std::map<std::string, int64_t> objects;
  for (int i = 0; i < 12; ++i) objects["team-" + std::to_string(i)] = 9;
  const Cluster c = Build(objects);
  const Placement p = Place(kMembers, c.hashes, c.work, ShardMap());
  const auto load =
      WorkLoad(MapOf(p.desired), kMembers, WeighNamespaces(c.hashes, c.work, ShardMap()));
  for (const auto& [who, w] : load) EXPECT_EQ(w, 40) << who;
}

// Nobody published work: the split is by namespace count, exactly DesiredPartition's.
TEST(WorkBalanceTest, QuietClusterSplitsByNamespaceCount) {
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 10; ++i) hashes.push_back(api::ShardHash("quiet-" + std::to_string(i)));
  std::sort(hashes.begin(), hashes.end());
  const Placement p = Place(kMembers, hashes, {}, ShardMap());
  EXPECT_EQ(p.desired, DesiredPartition(kMembers, hashes, ShardMap()));
  EXPECT_TRUE(p.weights.empty());
  for (const NamespaceWeight& w : WeighNamespaces(hashes, {}, ShardMap())) EXPECT_EQ(w.weight, 1);
  // Replicas that publish, but hold no pods or ReplicaSets: quiet as well.
  std::map<std::string, int64_t> none;
  for (int i = 0; i < 10; ++i) none["quiet-" + std::to_string(i)] = 0;
  const Placement published = Place(kMembers, hashes, {{"a", ShardWorkOf(none)}}, ShardMap());
  EXPECT_EQ(published.desired, p.desired);
  EXPECT_TRUE(published.weights.empty());
}

// Once placed, the same work (or work that moved a little) asks for no change: the desired
// partition is the map itself and the load is even, so the coordinator never re-places.
TEST(WorkBalanceTest, SteadyClusterKeepsItsMap) {
  std::map<std::string, int64_t> objects;
  for (int i = 0; i < 3; ++i) objects["busy-" + std::to_string(i)] = 40;
  for (int i = 0; i < 9; ++i) objects["calm-" + std::to_string(i)] = 4;
  Cluster c = Build(objects);
  const ShardMap placed = MapOf(Place(kMembers, c.hashes, c.work, ShardMap()).desired);
  Placement again = Place(kMembers, c.hashes, c.work, placed);
  EXPECT_EQ(MapOf(again.desired), placed);
  EXPECT_FALSE(Uneven(again, placed, kMembers, c.hashes));
  objects["calm-0"] += 3;
  objects["busy-1"] -= 2;
  c = Build(objects);
  again = Place(kMembers, c.hashes, c.work, placed);
  EXPECT_FALSE(Uneven(again, placed, kMembers, c.hashes));
}

TEST(WorkBalanceTest, GateOpensOnlyAfterTheLoadStayedUnevenForTheHold) {
  const Clock::duration r = std::chrono::seconds(2);
  RebalanceGate gate(3 * r);
  const Clock::time_point t0{};
  EXPECT_FALSE(gate.Due(true, true, t0));
  EXPECT_FALSE(gate.Due(true, true, t0 + r));
  EXPECT_FALSE(gate.Due(true, true, t0 + 2 * r));
  EXPECT_FALSE(gate.Due(false, true, t0 + 3 * r));  // even once: the hold starts over
  EXPECT_FALSE(gate.Due(true, true, t0 + 4 * r));
  EXPECT_FALSE(gate.Due(true, true, t0 + 6 * r));
  EXPECT_TRUE(gate.Due(true, true, t0 + 7 * r));
  EXPECT_FALSE(gate.Due(true, true, t0 + 8 * r));  // due once, then held again
}

// While a cluster grows its load stays uneven: each re-placement doubles the next hold, up to
// kMaxHoldFactor times the first, so the map changes a few times over the growth rather than
// once a hold.
TEST(WorkBalanceTest, GateDoublesItsHoldAfterEachReplacementUpToTheLongest) {
  const Clock::duration h = std::chrono::seconds(6);
  RebalanceGate gate(h);
  Clock::time_point t{};
  std::vector<Clock::duration> waited;
  for (int i = 0; i < 8; ++i) {
    const Clock::time_point since = t;
    EXPECT_FALSE(gate.Due(true, true, t));
    do {
      t += std::chrono::seconds(1);
    } while (!gate.Due(true, true, t));
    waited.push_back(t - since);
    t += std::chrono::seconds(1);
  }
  const std::vector<Clock::duration> want = {h,      2 * h,  4 * h,  8 * h,
                                             16 * h, 32 * h, 32 * h, 32 * h};
  EXPECT_EQ(waited, want);
  EXPECT_EQ(gate.hold(), RebalanceGate::kMaxHoldFactor * h);
}

// An even load shorter than the longest hold keeps the doubled hold (a move settling between two
// uneven passes); an even load that lasts the longest hold, or a Reset, brings the first back.
TEST(WorkBalanceTest, GateFallsBackToTheFirstHoldAfterALongEvenLoadOrAReset) {
  const Clock::duration h = std::chrono::seconds(6);
  const Clock::duration longest = RebalanceGate::kMaxHoldFactor * h;
  RebalanceGate gate(h);
  Clock::time_point t{};
  EXPECT_FALSE(gate.Due(true, true, t));
  EXPECT_TRUE(gate.Due(true, true, t + h));
  EXPECT_FALSE(gate.Due(true, true, t + 2 * h));
  EXPECT_TRUE(gate.Due(true, true, t + 4 * h));
  EXPECT_EQ(gate.hold(), 4 * h);
  t += 5 * h;
  EXPECT_FALSE(gate.Due(false, true, t));
  EXPECT_FALSE(gate.Due(false, true, t + longest - std::chrono::seconds(1)));
  EXPECT_EQ(gate.hold(), 4 * h);
  EXPECT_FALSE(gate.Due(true, true, t + longest));  // the even spell ended a second short
  EXPECT_FALSE(gate.Due(false, true, t + longest + h));
  EXPECT_FALSE(gate.Due(false, true, t + 2 * longest + h));
  EXPECT_EQ(gate.hold(), h);
  t += 3 * longest;
  EXPECT_FALSE(gate.Due(true, true, t));
  EXPECT_TRUE(gate.Due(true, true, t + h));
  EXPECT_EQ(gate.hold(), 2 * h);
  gate.Reset();
  EXPECT_EQ(gate.hold(), h);
  EXPECT_FALSE(gate.Due(true, true, t + 2 * h));
  EXPECT_TRUE(gate.Due(true, true, t + 3 * h));
  EXPECT_EQ(gate.hold(), 2 * h);
}

// A replica joining or leaving starts the gate over at the first hold, however long the hold had
// grown; the same members seen again keep it.
TEST(WorkBalanceTest, GateStartsOverAtTheFirstHoldWhenTheMembersChange) {
  const Clock::duration h = std::chrono::seconds(6);
  RebalanceGate gate(h);
  const Clock::time_point t{};
  gate.SeeMembers({"a", "b"});
  EXPECT_FALSE(gate.Due(true, true, t));
  EXPECT_TRUE(gate.Due(true, true, t + h));
  EXPECT_FALSE(gate.Due(true, true, t + 2 * h));
  EXPECT_TRUE(gate.Due(true, true, t + 4 * h));
  EXPECT_FALSE(gate.Due(true, true, t + 5 * h));  // uneven again, held for 4h from here
  gate.SeeMembers({"a", "b"});
  EXPECT_EQ(gate.hold(), 4 * h);
  EXPECT_FALSE(gate.Due(true, true, t + 8 * h));
  gate.SeeMembers({"a", "b", "c"});
  EXPECT_EQ(gate.hold(), h);
  EXPECT_FALSE(gate.Due(true, true, t + 9 * h));  // the hold starts over with the new members
  EXPECT_TRUE(gate.Due(true, true, t + 10 * h));
  gate.SeeMembers({"a", "c"});
  EXPECT_EQ(gate.hold(), h);
}

// A quiet cluster (no published work) is placed by namespace count: the hold stays the first, so
// namespaces created one after another are placed as soon as today.
TEST(WorkBalanceTest, GateKeepsTheFirstHoldWhenPlacingByNamespaceCount) {
  const Clock::duration h = std::chrono::seconds(6);
  RebalanceGate gate(h);
  const Clock::time_point t{};
  EXPECT_FALSE(gate.Due(true, true, t));
  EXPECT_TRUE(gate.Due(true, true, t + h));
  EXPECT_EQ(gate.hold(), 2 * h);
  EXPECT_FALSE(gate.Due(true, false, t + 2 * h));
  EXPECT_TRUE(gate.Due(true, false, t + 4 * h));
  EXPECT_EQ(gate.hold(), h);
  EXPECT_FALSE(gate.Due(true, false, t + 5 * h));
  EXPECT_TRUE(gate.Due(true, false, t + 6 * h));
  EXPECT_EQ(gate.hold(), h);
}

// A member whose annotation did not parse is absent from `work`: its namespaces weigh 1 each,
// while what the others publish still counts.
TEST(WorkBalanceTest, NamespacesOfAMemberWithoutValidWorkWeighOne) {
  ASSERT_FALSE(ParseShardWork(R"({"namespaces":{"x":-3},"rest":0})").has_value());
  const Cluster c = Build({{"x", 40}, {"y", 40}}, "b");
  std::vector<uint64_t> hashes = c.hashes;
  hashes.push_back(api::ShardHash("z"));
  std::sort(hashes.begin(), hashes.end());
  for (const NamespaceWeight& w : WeighNamespaces(hashes, c.work, ShardMap())) {
    EXPECT_EQ(w.weight, w.hash == api::ShardHash("z") ? 1 : 41);
  }
}

// "rest" is shared by the publisher's own namespaces that it did not list.
TEST(WorkBalanceTest, RestIsSharedByThePublishersUnlistedNamespaces) {
  const std::vector<uint64_t> hashes = [] {
    std::vector<uint64_t> h{api::ShardHash("p"), api::ShardHash("q"), api::ShardHash("r")};
    std::sort(h.begin(), h.end());
    return h;
  }();
  auto map = ShardMap::FromEntries({{api::ShardRange{0, UINT64_MAX}, "a", ""}});
  ASSERT_TRUE(map.ok());
  ShardWork work;
  work.namespaces = {{"p", 7}};
  work.rest = 20;
  for (const NamespaceWeight& w : WeighNamespaces(hashes, {{"a", work}}, *map)) {
    EXPECT_EQ(w.weight, w.hash == api::ShardHash("p") ? 7 : 10);
  }
}

}  // namespace
}  // namespace kcm::sharding
