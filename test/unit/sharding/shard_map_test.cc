#include "pkg/sharding/shard_map.h"

#include <gtest/gtest.h>

namespace kcm::sharding {
namespace {

constexpr uint64_t kHalf = 0x8000000000000000ull;

ShardMap Two(const std::string& a, const std::string& b, const std::string& next_b = "") {
  auto m = ShardMap::FromEntries({{{0, kHalf - 1}, a, ""}, {{kHalf, UINT64_MAX}, b, next_b}});
  EXPECT_TRUE(m.ok());
  return *m;
}

TEST(ShardMapTest, StartsWithTheWholeSpaceUnowned) {
  ShardMap m;
  ASSERT_EQ(m.entries().size(), 1u);
  EXPECT_EQ(m.entries()[0].range, (api::ShardRange{0, UINT64_MAX}));
  EXPECT_EQ(m.entries()[0].owner, "");
  EXPECT_TRUE(m.Served("").empty());  // "" is nobody
}

TEST(ShardMapTest, RoundTripsThroughItsAnnotation) {
  ShardMap m = Two("a", "b", "c");
  EXPECT_EQ(
      m.Serialize(),
      R"({"ranges":[{"start":"0x0000000000000000","end":"0x8000000000000000","owner":"a"},)"
      R"({"start":"0x8000000000000000","end":"0x10000000000000000","owner":"b","next":"c"}]})");
  auto back = ShardMap::Parse(m.Serialize());
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(*back, m);
}

// A map that does not cover the space exactly once is refused: nobody could tell who owns a gap,
// and an overlap would be two owners.
TEST(ShardMapTest, RefusesGapsOverlapsAndJunk) {
  EXPECT_FALSE(ShardMap::FromEntries({}).ok());
  EXPECT_FALSE(ShardMap::FromEntries({{{0, 10}, "a", ""}}).ok());
  EXPECT_FALSE(ShardMap::FromEntries({{{0, 10}, "a", ""}, {{12, UINT64_MAX}, "b", ""}}).ok());
  EXPECT_FALSE(ShardMap::FromEntries({{{0, 10}, "a", ""}, {{10, UINT64_MAX}, "b", ""}}).ok());
  EXPECT_FALSE(ShardMap::FromEntries({{{1, UINT64_MAX}, "a", ""}}).ok());
  EXPECT_FALSE(
      ShardMap::FromEntries({{{0, UINT64_MAX}, "a", ""}, {{0, UINT64_MAX}, "b", ""}}).ok());
  for (
      const char* bad :
      {"", "{}", R"({"ranges":{}})", R"({"ranges":[{"start":"0x0"}]})",
       R"({"ranges":[{"start":"0x0000000000000000","end":"0x0000000000000001"}]})",
       // A bound is only a bound: text that would make a second range if spliced into a
       // selector (the first entry then read as [0, 0x8000…)) is refused.
       R"({"ranges":[{"start":"0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x0000000000000000","end":"0x0000000000000001","owner":"a"},)"
       R"({"start":"0x8000000000000000","end":"0x10000000000000000","owner":"b"}]})"}) {
    auto r = ShardMap::Parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().reason, "InvalidShardMap");
    }
  }
}

TEST(ShardMapTest, SplitAndMergeChangeNoOwnership) {
  ShardMap m = Two("a", "b");
  m.SplitAt({0, 5, kHalf, kHalf + 7, UINT64_MAX});
  ASSERT_EQ(m.entries().size(), 5u);
  EXPECT_EQ(m.entries()[0].range, (api::ShardRange{0, 4}));
  EXPECT_EQ(m.entries()[1].range, (api::ShardRange{5, kHalf - 1}));
  EXPECT_EQ(m.entries()[2].range, (api::ShardRange{kHalf, kHalf + 6}));
  EXPECT_EQ(m.entries()[4].range, (api::ShardRange{UINT64_MAX, UINT64_MAX}));
  for (uint64_t h : {uint64_t{0}, uint64_t{5}, kHalf - 1, kHalf, UINT64_MAX}) {
    EXPECT_EQ(m.At(h).owner, h < kHalf ? "a" : "b") << h;
  }
  m.Merge();
  EXPECT_EQ(m, Two("a", "b"));
}

TEST(ShardMapTest, ServedLeavesOutPendingHandoffs) {
  ShardMap m = Two("a", "a", "b");
  EXPECT_EQ(m.Served("a"), (std::vector<api::ShardRange>{{0, kHalf - 1}}));
  EXPECT_TRUE(m.Served("b").empty());
  ShardMap joined = Two("a", "a");
  EXPECT_EQ(joined.Served("a"), (std::vector<api::ShardRange>{{0, UINT64_MAX}}));
}

}  // namespace
}  // namespace kcm::sharding
