// api::ShardSelector: the hash, the wire form upstream's parser takes, matching, and the
// metadata.shardInfo echo of every list decoder.
#include "pkg/api/shard_selector.h"

#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/list_stream.h"
#include "pkg/api/pod.h"
#include "test/unit/api/protobuf_writer.h"

namespace kcm::api {
namespace {

using testing::Bytes;
using testing::Envelope;

// FNV-1a 64 as upstream's sharding.HashField (hash/fnv New64a): reference values, and the
// clustering the balancing has to live with — names that differ only at the end share their top
// bits.
TEST(ShardHashTest, IsFnv1a64) {
  EXPECT_EQ(ShardHash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(ShardHash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(ShardHash("shard-1"), 0x8ae48c73fa64eef9ull);
  EXPECT_EQ(ShardHash("shard-2"), 0x8ae48973fa64e9e0ull);
  for (int i = 1; i <= 8; ++i) {
    EXPECT_EQ(ShardHash("shard-" + std::to_string(i)) >> 48, 0x8ae4u) << i;
  }
}

TEST(ShardSelectorTest, WritesUpstreamsWireForm) {
  ShardSelector s(ShardField::kNamespace,
                  {{0, 0x7fffffffffffffffull}, {0xc000000000000000ull, UINT64_MAX}});
  EXPECT_EQ(s.String(),
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000') || "
            "shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')");
  EXPECT_EQ(ShardSelector(ShardField::kUid, {{1, 1}}).String(),
            "shardRange(object.metadata.uid, '0x0000000000000001', '0x0000000000000002')");
}

TEST(ShardSelectorTest, ParsesWhatItWrites) {
  ShardSelector s(ShardField::kNamespace, {{0x10, 0x1f}, {0x8ae48973fa64e9e0ull, UINT64_MAX}});
  auto parsed = ShardSelector::Parse(s.String());
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, s);
  auto spaced = ShardSelector::Parse(
      "  shardRange( object.metadata.uid ,'0x0000000000000000','0x10000000000000000' )  ");
  ASSERT_TRUE(spaced.ok()) << spaced.error().ToString();
  EXPECT_EQ(spaced->field(), ShardField::kUid);
  EXPECT_EQ(spaced->ranges(), (std::vector<ShardRange>{{0, UINT64_MAX}}));
}

TEST(ShardSelectorTest, RefusesWhatUpstreamRefuses) {
  for (const char* bad : {
           "",
           "shardRange(object.metadata.name, '0x0000000000000000', '0x0000000000000001')",
           "shardRange(object.metadata.namespace, '0x0', '0x8000000000000000')",
           "shardRange(object.metadata.namespace, '0x00000000000000000', '0x0000000000000001')",
           "shardRange(object.metadata.namespace, '0x000000000000000A', '0x0000000000000f01')",
           "shardRange(object.metadata.namespace, '0x0000000000000002', '0x0000000000000002')",
           "shardRange(object.metadata.namespace, '0x10000000000000000', '0x10000000000000000')",
           "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001') || "
           "shardRange(object.metadata.uid, '0x0000000000000001', '0x0000000000000002')",
           "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001') &&",
       }) {
    auto r = ShardSelector::Parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.error().reason, "InvalidShardSelector");
    }
  }
}

TEST(ShardSelectorTest, MatchesByTheFieldsHash) {
  const uint64_t h = ShardHash("shard-2");
  ShardSelector s(ShardField::kNamespace, {{h, h}, {0, 0}});
  EXPECT_TRUE(s.Matches("shard-2"));
  EXPECT_FALSE(s.Matches("shard-1"));
  Pod pod;
  pod.metadata.namespace_ = "shard-2";
  EXPECT_TRUE(s.Matches(pod));
  pod.metadata.namespace_ = "shard-3";
  EXPECT_FALSE(s.Matches(pod));
  EXPECT_FALSE(ShardSelector().Matches("shard-2"));  // empty: serves nothing
}

// Every list decoder reads metadata.shardInfo.selector; "" when the server applied none.
TEST(ShardSelectorTest, ListsEchoTheAppliedSelector) {
  const std::string sel =
      "shardRange(object.metadata.namespace, '0x0000000000000000', "
      "'0x8000000000000000')";
  const std::string json = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":)"
                           R"("9","shardInfo":{"selector":")" +
                           sel + R"("}},"items":[]})";
  const std::string plain = R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[]})";
  const std::string proto = Envelope("PodList", Bytes(1, Bytes(2, "9") + Bytes(5, Bytes(1, sel))));
  Decoder d;
  auto whole = PodCodec().decode_list(d, json);
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  EXPECT_EQ(whole->shard_selector, sel);
  auto none = PodCodec().decode_list(d, plain);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->shard_selector, "");
  auto pb = PodCodec().decode_list_protobuf(d, proto);
  ASSERT_TRUE(pb.ok()) << pb.error().ToString();
  EXPECT_EQ(pb->shard_selector, sel);
  EXPECT_EQ(pb->resource_version, "9");
  for (auto [encoding, body] :
       {std::pair{ListEncoding::kJson, json}, std::pair{ListEncoding::kProtobuf, proto}}) {
    ListStreamDecoder stream(PodCodec(), encoding, 0);
    for (size_t i = 0; i < body.size(); i += 5) {
      ASSERT_TRUE(stream.Feed(std::string_view(body).substr(i, 5)).ok());
    }
    auto list = stream.Finish();
    ASSERT_TRUE(list.ok()) << list.error().ToString();
    EXPECT_EQ(list->shard_selector, sel);
  }
}

}  // namespace
}  // namespace kcm::api
