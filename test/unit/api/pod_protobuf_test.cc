// Protobuf reads of pods: the same object fetched from a real kube-apiserver (v1.37) as JSON and as
// application/vnd.kubernetes.protobuf (test/testdata/api/*-protobuf.{json,pb}) must decode into
// identical pruned records; malformed input must be a DecodeError, never a crash.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/time.h"
#include "test/unit/api/protobuf_writer.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

void ExpectSamePod(const Pod& json, const Pod& pb) {
  const ObjectMeta& a = json.metadata;
  const ObjectMeta& b = pb.metadata;
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.namespace_, b.namespace_);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.resource_version, b.resource_version);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.creation_timestamp, b.creation_timestamp);
  EXPECT_EQ(a.deletion_timestamp, b.deletion_timestamp);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.annotations, b.annotations);
  ASSERT_EQ(a.owner_references.size(), b.owner_references.size());
  for (size_t i = 0; i < a.owner_references.size(); ++i) {
    const OwnerReference& x = a.owner_references[i];
    const OwnerReference& y = b.owner_references[i];
    EXPECT_EQ(x.api_version, y.api_version);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.uid, y.uid);
    EXPECT_EQ(x.controller, y.controller);
    EXPECT_EQ(x.block_owner_deletion, y.block_owner_deletion);
  }
  EXPECT_EQ(json.node_name, pb.node_name);
  EXPECT_EQ(json.deletion_cost, pb.deletion_cost);
  EXPECT_EQ(json.phase, pb.phase);
  EXPECT_EQ(json.ready, pb.ready);
  EXPECT_EQ(json.ready_transition_time, pb.ready_transition_time);
  EXPECT_EQ(json.restart_count_max, pb.restart_count_max);
}

// The watch stream's frames: a 4-byte big-endian length, then the frame.
std::vector<std::string> SplitLengthPrefixed(const std::string& stream) {
  std::vector<std::string> frames;
  size_t pos = 0;
  while (pos + 4 <= stream.size()) {
    uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n = (n << 8) | static_cast<uint8_t>(stream[pos + i]);
    frames.push_back(stream.substr(pos + 4, n));
    pos += 4 + n;
  }
  EXPECT_EQ(pos, stream.size());
  return frames;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (nl > pos) lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

TEST(PodProtobufTest, SamePodAsJson) {
  Decoder d;
  Decoder& pbd = d;
  auto json = DecodePod(d, testing::ApiTestdata("pod-protobuf.json"));
  ASSERT_TRUE(json.ok()) << json.error().ToString();
  const std::string body = testing::ApiTestdata("pod-protobuf.pb");
  ASSERT_TRUE(HasProtobufMagic(body));
  auto pb = DecodePodProtobuf(pbd, body);
  ASSERT_TRUE(pb.ok()) << pb.error().ToString();
  ExpectSamePod(**json, **pb);
  // The fixture exercises every kept field (so the comparison above compares something).
  const Pod& p = **pb;
  EXPECT_EQ(p.metadata.name, "web-7d9f8b6c5d-proto");
  EXPECT_FALSE(p.metadata.uid.empty());
  EXPECT_EQ(p.metadata.generation, 1);
  EXPECT_TRUE(p.metadata.creation_timestamp.has_value());
  EXPECT_EQ(p.metadata.labels.size(), 4u);
  EXPECT_TRUE(p.metadata.annotations.empty());  // pruned
  ASSERT_EQ(p.metadata.owner_references.size(), 1u);
  EXPECT_EQ(p.metadata.owner_references[0].api_version, "apps/v1");
  EXPECT_TRUE(p.metadata.owner_references[0].controller);
  EXPECT_TRUE(p.metadata.owner_references[0].block_owner_deletion);
  EXPECT_EQ(p.deletion_cost, -7);
  EXPECT_EQ(p.node_name, "node-17");
  EXPECT_EQ(p.phase, PodPhase::kRunning);
  EXPECT_TRUE(p.IsReady());
  EXPECT_TRUE(p.ready_transition_time.has_value());
  EXPECT_EQ(p.restart_count_max, 2);
}

TEST(PodProtobufTest, SameListAsJson) {
  Decoder d;
  auto json = PodCodec().decode_list(d, testing::ApiTestdata("podlist-protobuf.json"));
  ASSERT_TRUE(json.ok()) << json.error().ToString();
  auto pb = PodCodec().decode_list_protobuf(d, testing::ApiTestdata("podlist-protobuf.pb"));
  ASSERT_TRUE(pb.ok()) << pb.error().ToString();
  EXPECT_FALSE(pb->resource_version.empty());
  EXPECT_EQ(json->resource_version, pb->resource_version);
  EXPECT_EQ(json->continue_token, pb->continue_token);
  EXPECT_EQ(json->remaining_item_count, pb->remaining_item_count);
  ASSERT_EQ(json->items.size(), 1u);
  ASSERT_EQ(pb->items.size(), 1u);
  ExpectSamePod(static_cast<const Pod&>(*json->items[0]), static_cast<const Pod&>(*pb->items[0]));
}

TEST(PodProtobufTest, SameWatchEventsAsJson) {
  Decoder d;
  const auto pb_frames = SplitLengthPrefixed(testing::ApiTestdata("pod-watch-protobuf.pb"));
  const auto json_frames = Lines(testing::ApiTestdata("pod-watch-protobuf.json"));
  ASSERT_EQ(pb_frames.size(), 3u);
  ASSERT_EQ(json_frames.size(), pb_frames.size());
  for (size_t i = 0; i < pb_frames.size(); ++i) {
    SCOPED_TRACE(i);
    auto json = PodCodec().decode_watch_event(d, json_frames[i]);
    ASSERT_TRUE(json.ok()) << json.error().ToString();
    auto pb = PodCodec().decode_watch_event_protobuf(d, pb_frames[i]);
    ASSERT_TRUE(pb.ok()) << pb.error().ToString();
    EXPECT_EQ(pb->type, WatchEventType::kModified);
    EXPECT_EQ(json->type, pb->type);
    EXPECT_EQ(json->resource_version, pb->resource_version);
    ASSERT_NE(pb->object, nullptr);
    ExpectSamePod(static_cast<const Pod&>(*json->object), static_cast<const Pod&>(*pb->object));
  }
  // The fixture's events: a label change, the delete (deletionTimestamp set, finalizer kept),
  // the finalizer's removal.
  auto last = PodCodec().decode_watch_event_protobuf(d, pb_frames[2]);
  const Pod& p = static_cast<const Pod&>(*last->object);
  EXPECT_TRUE(p.metadata.deletion_timestamp.has_value());
  EXPECT_FALSE(p.IsActive());
}

using testing::Bytes;
using testing::Envelope;
using testing::Varint;
using testing::VarintField;
std::string WatchFrame(std::string_view type, std::string_view object) {
  return Bytes(1, type) + Bytes(2, Bytes(1, object));
}

TEST(PodProtobufTest, BookmarkAndErrorFrames) {
  Decoder pbd;
  const std::string bookmark_meta =
      Bytes(6, "4242") + Bytes(12, Bytes(1, kInitialEventsEndAnnotation) + Bytes(2, "true"));
  auto bookmark = DecodePodWatchEventProtobuf(
      pbd, WatchFrame("BOOKMARK", Envelope("Pod", Bytes(1, bookmark_meta))));
  ASSERT_TRUE(bookmark.ok()) << bookmark.error().ToString();
  EXPECT_EQ(bookmark->type, WatchEventType::kBookmark);
  EXPECT_EQ(bookmark->resource_version, "4242");
  EXPECT_TRUE(bookmark->initial_events_end);
  EXPECT_EQ(bookmark->object, nullptr);

  const std::string status =
      Bytes(2, "Failure") + Bytes(3, "too old resource version") + Bytes(4, "Expired") +
      Bytes(5, Bytes(4, Bytes(1, "FieldValueInvalid"))) + VarintField(6, 410);
  // Enveloped at the frame level too: accepted.
  auto error = DecodePodWatchEventProtobuf(
      pbd, Envelope("WatchEvent", WatchFrame("ERROR", Envelope("Status", status))));
  ASSERT_TRUE(error.ok()) << error.error().ToString();
  EXPECT_EQ(error->type, WatchEventType::kError);
  EXPECT_EQ(error->error.code, 410);
  EXPECT_EQ(error->error.reason, "Expired");
  EXPECT_EQ(error->error.message, "too old resource version");
  EXPECT_EQ(error->error.causes, (std::vector<std::string>{"FieldValueInvalid"}));
  EXPECT_EQ(error->object, nullptr);
}

TEST(PodProtobufTest, SkipsUnknownFieldsOfEveryWireType) {
  Decoder pbd;
  const std::string fixed64 = Varint((uint64_t{99} << 3) | 1) + std::string(8, '\x7f');
  const std::string fixed32 = Varint((uint64_t{98} << 3) | 5) + std::string(4, '\x7f');
  const std::string pod = fixed64 + Bytes(1, Bytes(1, "p") + fixed32 + VarintField(97, 1)) +
                          Bytes(96, "ignored") + fixed32;
  auto decoded = DecodePodProtobuf(pbd, Envelope("Pod", pod));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ((*decoded)->metadata.name, "p");
}

void ExpectDecodeError(const Result<std::shared_ptr<const Pod>>& r, std::string_view what) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "DecodeError");
  EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
}

TEST(PodProtobufTest, MalformedInputIsADecodeError) {
  Decoder pbd;
  const std::string meta = Bytes(1, Bytes(1, "p"));
  ExpectDecodeError(DecodePodProtobuf(pbd, R"({"metadata":{"name":"p"}})"), "envelope");
  ExpectDecodeError(DecodePodProtobuf(pbd, ""), "envelope");
  // Truncated varint (a tag whose continuation bit promises more).
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", meta + "\x80")), "truncated varint");
  // A varint of eleven bytes.
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", VarintField(50, 1) + "\x90" +
                                                               std::string(10, '\xff') + "\x01")),
                    "varint");
  // A length past the end.
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", meta + "\x12\x05" + "ab")),
                    "length past the end");
  // metadata.name as a varint.
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", Bytes(1, VarintField(1, 5)))),
                    "metadata.name: wrong wire type");
  // Field number 0; groups.
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", meta + std::string("\x02\x00", 2))),
                    "invalid field number");
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", meta + Varint((7 << 3) | 3))),
                    "unsupported wire type");
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", "")), "metadata.name: required");
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("ReplicaSet", meta)), "unexpected kind");
  ExpectDecodeError(DecodePodProtobuf(pbd, Envelope("Pod", meta) + Bytes(3, "gzip")),
                    "unsupported contentEncoding");

  auto watch = DecodePodWatchEventProtobuf(pbd, WatchFrame("MODIFIED", "not enveloped"));
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.error().message.find("object: missing"), std::string::npos);
  watch = DecodePodWatchEventProtobuf(pbd, WatchFrame("RENAMED", Envelope("Pod", meta)));
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.error().message.find("unknown watch event type"), std::string::npos);
  watch = DecodePodWatchEventProtobuf(pbd, Bytes(1, "ADDED"));
  ASSERT_FALSE(watch.ok());
  EXPECT_NE(watch.error().message.find("object: required"), std::string::npos);
  auto list = DecodePodListProtobuf(pbd, Envelope("PodList", Bytes(2, Bytes(1, Bytes(3, "ns")))));
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("items[0].metadata.name: required"), std::string::npos)
      << list.error().message;
}

// Every truncation of a real body fails cleanly (or, where the cut falls between fields of the
// outermost message, decodes), and never reads past the end (ASan in hack/fuzz.sh).
TEST(PodProtobufTest, EveryTruncationOfARealPodIsHandled) {
  Decoder pbd;
  const std::string body = testing::ApiTestdata("pod-protobuf.pb");
  for (size_t n = 0; n < body.size(); ++n) {
    // A copy of exactly n bytes, so reading past it is an ASan error rather than silent.
    const std::string cut = body.substr(0, n);
    auto r = DecodePodProtobuf(pbd, cut);
    if (!r.ok()) {
      EXPECT_EQ(r.error().reason, "DecodeError");
    }
  }
  // A cut inside the envelope's raw field is always an error (its length runs past the end).
  auto r = DecodePodProtobuf(pbd, body.substr(0, body.size() - 1));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace kcm::api
