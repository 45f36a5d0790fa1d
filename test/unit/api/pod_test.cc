#include "pkg/api/pod.h"

#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/time.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

TEST(PodTest, DecodesTheSharedPodIntoThePrunedRecord) {
  Decoder d;
  auto pod = DecodePod(d, testing::ApiTestdata("pod-10k.json"));
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  const Pod& p = **pod;
  EXPECT_EQ(p.Kind(), "Pod");
  EXPECT_EQ(p.metadata.name, "web-7d9f8b6c5d-x2k4q");
  EXPECT_EQ(p.metadata.namespace_, "prod");
  EXPECT_EQ(p.metadata.uid, "2f1c7a8e-5b3d-4e6f-9a0b-1c2d3e4f5a6b");
  EXPECT_EQ(p.metadata.resource_version, "123456789");
  EXPECT_EQ(p.metadata.creation_timestamp, *ParseRFC3339("2026-11-29T10:00:00Z"));
  EXPECT_EQ(p.metadata.labels.size(), 4u);
  EXPECT_EQ(p.metadata.labels.at("pod-template-hash"), "7d9f8b6c5d");
  // Pruned: annotations other than the deletion cost are not kept.
  EXPECT_TRUE(p.metadata.annotations.empty());
  ASSERT_NE(p.metadata.ControllerRef(), nullptr);
  EXPECT_EQ(p.metadata.ControllerRef()->name, "web-7d9f8b6c5d");
  EXPECT_TRUE(p.metadata.ControllerRef()->block_owner_deletion);
  EXPECT_FALSE(p.node_name.empty());
  EXPECT_EQ(p.phase, PodPhase::kRunning);
  EXPECT_TRUE(p.IsReady());
  EXPECT_TRUE(p.ready_transition_time.has_value());
  EXPECT_TRUE(p.IsActive());
}

// R9 inputs: deletion cost (invalid = 0), Ready time, restart counts, phase; R10 activity.
TEST(PodTest, RankingFields) {
  Decoder d;
  auto pod = DecodePod(d, R"({"metadata":{"name":"p","annotations":{"a":"b",
      "controller.kubernetes.io/pod-deletion-cost":"-7"},"deletionTimestamp":"2026-11-29T10:00:00Z",
      "deletionGracePeriodSeconds":30,"finalizers":["f1","f2"]},
    "spec":{"nodeName":"n1"},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"},
      {"status":"False","lastTransitionTime":"2026-11-29T10:00:01Z","type":"Ready"}],
      "containerStatuses":[{"restartCount":2},{"restartCount":5},{"name":"x","restartCount":0}]}})");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  const Pod& p = **pod;
  EXPECT_EQ(p.deletion_cost, -7);
  EXPECT_EQ(p.node_name, "n1");
  EXPECT_EQ(p.phase, PodPhase::kPending);
  EXPECT_EQ(p.ready, ConditionStatus::kFalse);
  EXPECT_EQ(p.ready_transition_time, *ParseRFC3339("2026-11-29T10:00:01Z"));
  EXPECT_EQ(p.restart_count_max, 5);
  EXPECT_FALSE(p.IsActive());  // deletionTimestamp set

  auto invalid = DecodePod(d, R"({"metadata":{"name":"p","annotations":{
      "controller.kubernetes.io/pod-deletion-cost":"99999999999"}},"status":{"phase":"Succeeded"}})");
  ASSERT_TRUE(invalid.ok());
  EXPECT_EQ((*invalid)->deletion_cost, 0);
  EXPECT_FALSE((*invalid)->IsActive());
  auto absent = DecodePod(d, R"({"metadata":{"name":"p"}})");
  // Upstream getDeletionCostFromPodAnnotations: an absent annotation is a cost of 0.
  EXPECT_EQ((*absent)->deletion_cost, 0);
  EXPECT_EQ((*absent)->phase, PodPhase::kUnset);
}

// The cached record fits one 176-byte malloc chunk with make_shared's 16-byte control block (a
// 168-byte request); a byte more would cost 16 bytes on every cached pod (pod.h).
TEST(PodTest, RecordFitsOne176ByteChunk) {
  static_assert(sizeof(void*) != 8 || sizeof(Pod) <= 152);
  EXPECT_LE(sizeof(Pod) + 16 + sizeof(size_t), 176u);
}

// The restart count saturates in its 24 bits instead of wrapping; the highest count wins.
TEST(PodTest, RestartCountKeepsTheMaximumAndSaturates) {
  Pod p;
  p.NoteRestartCount(3);
  p.NoteRestartCount(1);
  EXPECT_EQ(p.restart_count_max, 3u);
  p.NoteRestartCount(-5);
  EXPECT_EQ(p.restart_count_max, 3u);
  p.NoteRestartCount(Pod::kMaxRestartCount + 10);
  EXPECT_EQ(p.restart_count_max, static_cast<uint32_t>(Pod::kMaxRestartCount));
  p.NoteRestartCount(7);
  EXPECT_EQ(p.restart_count_max, static_cast<uint32_t>(Pod::kMaxRestartCount));
  Decoder d;
  auto big = DecodePod(d, R"({"metadata":{"name":"p"},
      "status":{"containerStatuses":[{"restartCount":2147483647},{"restartCount":4}]}})");
  ASSERT_TRUE(big.ok()) << big.error().ToString();
  EXPECT_EQ((*big)->restart_count_max, static_cast<uint32_t>(Pod::kMaxRestartCount));
  EXPECT_EQ((*big)->phase, PodPhase::kUnset) << "the neighbouring bits are untouched";
}

TEST(PodTest, PaddedInputDecodesInPlace) {
  PaddedBuffer buf;
  buf.Append(R"(xx{"metadata":{"name":"p"}}yy)");
  Decoder d;
  auto pod = DecodePod(d, buf.Input(2, 25));
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  EXPECT_EQ((*pod)->metadata.name, "p");
}

}  // namespace
}  // namespace kcm::api

namespace kcm::api {
namespace {

TEST(JsonInputTest, FromStringUsesCapacityAsPadding) {
  std::string s = R"({"metadata":{"name":"p"}})";
  s.reserve(s.size() + kJsonPadding);
  EXPECT_TRUE(JsonInput::FromString(s).padded);
  std::string tight = "x";
  tight.shrink_to_fit();
  EXPECT_EQ(JsonInput::FromString(tight).padded, tight.capacity() >= 1 + kJsonPadding);
  Decoder d;
  auto pod = DecodePod(d, JsonInput::FromString(s));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)->metadata.name, "p");
}

}  // namespace
}  // namespace kcm::api
