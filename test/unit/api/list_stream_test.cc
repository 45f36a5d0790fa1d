// ListStreamDecoder: a LIST body fed in chunks of any size (1, 7, 4096 bytes, whole) gives the
// same items and list metadata as the whole-body decoders, in both encodings; errors (a cut-short
// body, a Status instead of a list, a malformed item, an item over the limit) are errors; and what
// it holds stays bounded by one item, not the body.
#include "pkg/api/list_stream.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/generic_object.h"
#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"
#include "test/unit/api/protobuf_writer.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

// --- protobuf lists (test/unit/api/protobuf_writer.h) ---------------------------------------

using testing::Bytes;
using testing::Envelope;
using testing::VarintField;

std::string PodMessage(const std::string& name, const std::string& rv, const std::string& node) {
  const std::string meta =
      Bytes(1, name) + Bytes(3, "ns") + Bytes(6, rv) + Bytes(11, Bytes(1, "app") + Bytes(2, "web"));
  // An unknown, skipped field between the known ones, as newer servers may send.
  return Bytes(1, meta) + Bytes(2, Bytes(10, node)) + Bytes(3, Bytes(1, "Running")) +
         Bytes(99, std::string(300, 'x'));
}

std::string ProtobufList(const std::vector<std::string>& items, const std::string& rv,
                         const std::string& cont = "", int64_t remaining = -1,
                         const std::string& kind = "PodList") {
  std::string list_meta = Bytes(2, rv) + Bytes(3, cont);
  if (remaining >= 0) list_meta += VarintField(4, static_cast<uint64_t>(remaining));
  std::string raw = Bytes(1, list_meta);
  for (const auto& item : items) raw += Bytes(2, item);
  raw += Bytes(15, std::string(5000, 'z'));  // an unknown List field, skipped as it streams
  // What the API server writes: typeMeta, raw, and empty contentEncoding and contentType.
  return Envelope(kind, raw) + Bytes(3, "") + Bytes(4, "");
}

std::vector<std::string> PodMessages(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(PodMessage("pod-" + std::to_string(i), std::to_string(100 + i), "node-a"));
  }
  return out;
}

// --- JSON lists --------------------------------------------------------------------------------

std::string JsonPod(int i) {
  // Strings holding braces, brackets, quotes and escapes must not confuse the scanner.
  return R"({"metadata":{"name":"pod-)" + std::to_string(i) +
         R"(","namespace":"ns","resourceVersion":")" + std::to_string(100 + i) +
         R"(","labels":{"app":"web","tricky":"}]\"{[\\"},"annotations":{"a":"items"}},)"
         R"("spec":{"nodeName":"node-a","containers":[{"name":"c","args":["[","{"]}]},)"
         R"("status":{"phase":"Running"}})";
}

std::string JsonList(int n, const std::string& rv, const std::string& cont = "",
                     const std::string& extra_item = "") {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                    R"(","continue":")" + cont + R"(","remainingItemCount":7},"items":[)";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += i % 2 == 0 ? ",\n  " : ",";
    out += JsonPod(i);
  }
  if (!extra_item.empty()) out += (n > 0 ? "," : "") + extra_item;
  out += "]}\n";
  return out;
}

// --- helpers -----------------------------------------------------------------------------------

Result<ObjectList> Stream(const Codec& codec, ListEncoding encoding, std::string_view body,
                          size_t chunk, size_t max_item = 0, size_t* peak = nullptr) {
  ListStreamDecoder d(codec, encoding, max_item);
  for (size_t i = 0; i < body.size(); i += chunk) {
    if (Status s = d.Feed(body.substr(i, chunk)); !s.ok()) return s.error();
  }
  if (peak != nullptr) *peak = d.peak_buffered_bytes();
  return d.Finish();
}

Result<ObjectList> Whole(const Codec& codec, ListEncoding encoding, const std::string& body) {
  Decoder d;
  if (encoding == ListEncoding::kProtobuf) return codec.decode_list_protobuf(d, body);
  return codec.decode_list(d, body);
}

void ExpectSameList(const ObjectList& want, const ObjectList& got) {
  EXPECT_EQ(want.resource_version, got.resource_version);
  EXPECT_EQ(want.continue_token, got.continue_token);
  EXPECT_EQ(want.remaining_item_count, got.remaining_item_count);
  ASSERT_EQ(want.items.size(), got.items.size());
  for (size_t i = 0; i < want.items.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& w = static_cast<const Pod&>(*want.items[i]);
    const auto& g = static_cast<const Pod&>(*got.items[i]);
    EXPECT_EQ(w.metadata.name, g.metadata.name);
    EXPECT_EQ(w.metadata.namespace_, g.metadata.namespace_);
    EXPECT_EQ(w.metadata.resource_version, g.metadata.resource_version);
    EXPECT_EQ(w.metadata.uid, g.metadata.uid);
    EXPECT_EQ(w.node_name, g.node_name);
    EXPECT_EQ(w.phase, g.phase);
    EXPECT_EQ(w.ready, g.ready);
  }
}

constexpr size_t kChunkSizes[] = {1, 7, 4096, size_t{1} << 30};

void ExpectStreamsLikeWhole(ListEncoding encoding, const std::string& body, size_t want_items) {
  auto whole = Whole(PodCodec(), encoding, body);
  ASSERT_TRUE(whole.ok()) << whole.error().ToString();
  ASSERT_EQ(whole->items.size(), want_items);
  for (size_t chunk : kChunkSizes) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    auto streamed = Stream(PodCodec(), encoding, body, chunk);
    ASSERT_TRUE(streamed.ok()) << streamed.error().ToString();
    ExpectSameList(*whole, *streamed);
  }
}

// --- same result as the whole-body decoders ----------------------------------------------------

TEST(ListStreamTest, JsonListSameAsWholeBodyDecoder) {
  ExpectStreamsLikeWhole(ListEncoding::kJson, JsonList(25, "4242", "next-page"), 25);
  auto list = Stream(PodCodec(), ListEncoding::kJson, JsonList(3, "4242", "next-page"), 7);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->resource_version, "4242");
  EXPECT_EQ(list->continue_token, "next-page");
  EXPECT_EQ(list->remaining_item_count, 7);
  ASSERT_EQ(list->items.size(), 3u);
  EXPECT_EQ(list->items[2]->Meta().name, "pod-2");
  EXPECT_EQ(list->items[2]->Meta().resource_version, "102");
}

TEST(ListStreamTest, ProtobufListSameAsWholeBodyDecoder) {
  ExpectStreamsLikeWhole(ListEncoding::kProtobuf,
                         ProtobufList(PodMessages(25), "4242", "next-page", 7), 25);
  auto list = Stream(PodCodec(), ListEncoding::kProtobuf,
                     ProtobufList(PodMessages(3), "4242", "next-page", 7), 7);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->resource_version, "4242");
  EXPECT_EQ(list->continue_token, "next-page");
  EXPECT_EQ(list->remaining_item_count, 7);
  ASSERT_EQ(list->items.size(), 3u);
  EXPECT_EQ(list->items[2]->Meta().name, "pod-2");
  EXPECT_EQ(static_cast<const Pod&>(*list->items[2]).node_name, "node-a");
}

// The lists kube-apiserver v1.37.2 sent (test/testdata/api), a real pod with managedFields,
// conditions and container statuses.
TEST(ListStreamTest, RecordedApiServerListsSameAsWholeBodyDecoder) {
  ExpectStreamsLikeWhole(ListEncoding::kProtobuf, testing::ApiTestdata("podlist-protobuf.pb"), 1);
  ExpectStreamsLikeWhole(ListEncoding::kJson, testing::ApiTestdata("podlist-protobuf.json"), 1);
  // The recorded pod, many times over, in both encodings.
  const std::string pod_json = testing::ApiTestdata("pod-protobuf.json");
  std::string json = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},)"
                     R"("items":[)";
  for (int i = 0; i < 40; ++i) json += (i ? "," : "") + pod_json;
  json += "]}";
  ExpectStreamsLikeWhole(ListEncoding::kJson, json, 40);

  const std::string pod_pb = testing::ApiTestdata("pod-protobuf.pb");
  ASSERT_TRUE(HasProtobufMagic(pod_pb));
  // The pod's own message is the envelope's raw (field 2); cut it out with the wire format.
  std::string_view rest = std::string_view(pod_pb).substr(4);
  std::string pod_message;
  while (!rest.empty()) {
    const uint8_t tag = static_cast<uint8_t>(rest[0]);
    rest.remove_prefix(1);
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t b = static_cast<uint8_t>(rest[0]);
      rest.remove_prefix(1);
      len |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) break;
    }
    if (tag == ((2 << 3) | 2)) pod_message = std::string(rest.substr(0, len));
    rest.remove_prefix(len);
  }
  ASSERT_FALSE(pod_message.empty());
  ExpectStreamsLikeWhole(ListEncoding::kProtobuf,
                         ProtobufList(std::vector<std::string>(40, pod_message), "9"), 40);
}

TEST(ListStreamTest, EmptyLists) {
  const std::string json =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]})";
  const std::string pb = ProtobufList({}, "5");
  for (size_t chunk : kChunkSizes) {
    SCOPED_TRACE(chunk);
    auto j = Stream(PodCodec(), ListEncoding::kJson, json, chunk);
    ASSERT_TRUE(j.ok()) << j.error().ToString();
    EXPECT_TRUE(j->items.empty());
    EXPECT_EQ(j->resource_version, "5");
    auto p = Stream(PodCodec(), ListEncoding::kProtobuf, pb, chunk);
    ASSERT_TRUE(p.ok()) << p.error().ToString();
    EXPECT_TRUE(p->items.empty());
    EXPECT_EQ(p->resource_version, "5");
  }
  // "items": null, as a Go nil slice would be written.
  auto null_items =
      Stream(PodCodec(), ListEncoding::kJson,
             R"({"kind":"PodList","metadata":{"resourceVersion":"5"},"items":null})", 3);
  ASSERT_TRUE(null_items.ok()) << null_items.error().ToString();
  EXPECT_TRUE(null_items->items.empty());
}

// --- errors ------------------------------------------------------------------------------------

TEST(ListStreamTest, TruncatedBodiesAreErrors) {
  const std::string json = JsonList(3, "8");
  const size_t json_end = json.rfind('}') + 1;  // what follows is the trailing newline
  for (size_t cut = 0; cut < json_end; ++cut) {
    SCOPED_TRACE("json cut at " + std::to_string(cut));
    auto list = Stream(PodCodec(), ListEncoding::kJson, json.substr(0, cut), 7);
    EXPECT_FALSE(list.ok());
  }
  // The envelope's two trailing empty fields (4 bytes) are optional; a cut before them loses
  // list bytes.
  const std::string pb = ProtobufList(PodMessages(3), "8");
  for (size_t cut = 0; cut < pb.size() - 4; ++cut) {
    SCOPED_TRACE("protobuf cut at " + std::to_string(cut));
    auto list = Stream(PodCodec(), ListEncoding::kProtobuf, pb.substr(0, cut), 7);
    EXPECT_FALSE(list.ok());
  }
}

TEST(ListStreamTest, StatusBodyIsNotAList) {
  const std::string json_status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old",)"
      R"("reason":"Expired","code":410})";
  auto j = Stream(PodCodec(), ListEncoding::kJson, json_status, 7);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().reason, "DecodeError");
  const std::string status_msg = Bytes(3, "too old") + Bytes(4, "Expired") + VarintField(6, 410);
  const std::string pb_status = Envelope("Status", status_msg) + Bytes(3, "") + Bytes(4, "");
  auto p = Stream(PodCodec(), ListEncoding::kProtobuf, pb_status, 7);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().reason, "DecodeError");
  EXPECT_NE(p.error().message.find("unexpected kind \"Status\""), std::string::npos)
      << p.error().message;
}

TEST(ListStreamTest, MalformedItemNamesItsIndexAsTheWholeBodyDecoder) {
  const std::string json = JsonList(2, "8", "", R"({"metadata":{"name":7}})");
  Decoder d;
  auto whole = PodCodec().decode_list(d, json);
  ASSERT_FALSE(whole.ok());
  for (size_t chunk : kChunkSizes) {
    auto streamed = Stream(PodCodec(), ListEncoding::kJson, json, chunk);
    ASSERT_FALSE(streamed.ok());
    EXPECT_EQ(streamed.error().reason, "DecodeError");
    EXPECT_EQ(streamed.error().message, whole.error().message);
  }
  std::vector<std::string> items = PodMessages(2);
  items.push_back(Bytes(1, Bytes(1, "")));  // a pod without a name
  const std::string pb = ProtobufList(items, "8");
  Decoder whole_decoder;
  auto pb_whole = PodCodec().decode_list_protobuf(whole_decoder, pb);
  ASSERT_FALSE(pb_whole.ok());
  for (size_t chunk : kChunkSizes) {
    auto streamed = Stream(PodCodec(), ListEncoding::kProtobuf, pb, chunk);
    ASSERT_FALSE(streamed.ok());
    EXPECT_EQ(streamed.error().message, pb_whole.error().message);
    EXPECT_NE(streamed.error().message.find("items[2]"), std::string::npos);
  }
  // Not an object among the items; a missing comma.
  EXPECT_FALSE(Stream(PodCodec(), ListEncoding::kJson,
                      R"({"metadata":{},"items":[{"metadata":{"name":"a"}},7]})", 3)
                   .ok());
  EXPECT_FALSE(Stream(PodCodec(), ListEncoding::kJson,
                      R"({"metadata":{},"items":[{"metadata":{"name":"a"}} {"metadata":{}}]})", 3)
                   .ok());
}

TEST(ListStreamTest, ItemOverTheLimitIsTooLarge) {
  const std::string big = PodMessage(std::string(3000, 'n'), "1", "node");
  for (ListEncoding encoding : {ListEncoding::kJson, ListEncoding::kProtobuf}) {
    const std::string body =
        encoding == ListEncoding::kJson
            ? JsonList(1, "1", "", R"({"metadata":{"name":")" + std::string(3000, 'n') + "\"}}")
            : ProtobufList({PodMessage("a", "1", "n"), big}, "1");
    auto list = Stream(PodCodec(), encoding, body, 4096, /*max_item=*/2048);
    ASSERT_FALSE(list.ok());
    EXPECT_TRUE(errors::IsTooLarge(list.error())) << list.error().ToString();
    // The same list passes with room for the item.
    EXPECT_TRUE(Stream(PodCodec(), encoding, body, 4096, /*max_item=*/8192).ok());
  }
}

// A hostile or broken server may send a huge field outside "items": it is held (to decode the
// list's metadata at the end), so it is bounded like one item, not buffered without limit.
TEST(ListStreamTest, HugeFieldOutsideTheItemsIsTooLarge) {
  const std::string body = R"({"kind":"PodList","metadata":{"resourceVersion":"1"},"junk":")" +
                           std::string(100000, 'x') + R"(","items":[]})";
  auto list = Stream(PodCodec(), ListEncoding::kJson, body, 4096, /*max_item=*/2048);
  ASSERT_FALSE(list.ok());
  EXPECT_TRUE(errors::IsTooLarge(list.error())) << list.error().ToString();
  EXPECT_TRUE(Stream(PodCodec(), ListEncoding::kJson, body, 4096, /*max_item=*/0).ok());
}

// --- bounded memory ----------------------------------------------------------------------------

TEST(ListStreamTest, HoldsAboutOneItemNotTheBody) {
  const std::string json = JsonList(2000, "1");
  const std::string pb = ProtobufList(PodMessages(2000), "1");
  const size_t json_item = JsonPod(0).size();
  const size_t pb_item = PodMessages(1)[0].size();
  for (size_t chunk : {size_t{7}, size_t{4096}, size_t{16384}}) {
    SCOPED_TRACE(chunk);
    size_t peak = 0;
    ASSERT_TRUE(Stream(PodCodec(), ListEncoding::kJson, json, chunk, 0, &peak).ok());
    // One item, the top-level text around "items" and at most one chunk's tail of an item.
    EXPECT_LE(peak, json_item + 200 + chunk) << "body " << json.size();
    EXPECT_LT(peak, json.size() / 20);
    ASSERT_TRUE(Stream(PodCodec(), ListEncoding::kProtobuf, pb, chunk, 0, &peak).ok());
    EXPECT_LE(peak, pb_item + 32) << "body " << pb.size();
    EXPECT_LT(peak, pb.size() / 20);
  }
}

// --- other kinds -------------------------------------------------------------------------------

// Items of a generic list take their kind from the list's, as with the whole-body decoder.
TEST(ListStreamTest, GenericItemsTakeTheListsKind) {
  const std::string json =
      R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"3"},)"
      R"("items":[{"metadata":{"name":"a","namespace":"x"},"data":{"k":"v"}}]})";
  auto list = Stream(GenericCodec(), ListEncoding::kJson, json, 5);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Kind(), "ConfigMap");
  EXPECT_EQ(list->resource_version, "3");
}

// Every kind streams JSON; a kind without protobuf decoders (ReplicaSet) is never asked for
// protobuf, and a protobuf body for it is an error, not a guess.
TEST(ListStreamTest, ReplicaSetListsStreamAsJson) {
  const std::string json =
      R"({"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"3"},)"
      R"("items":[{"metadata":{"name":"a","namespace":"x"},"spec":{"replicas":2}}]})";
  auto list = Stream(ReplicaSetCodec(), ListEncoding::kJson, json, 1);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Meta().name, "a");
  auto pb = Stream(ReplicaSetCodec(), ListEncoding::kProtobuf, ProtobufList({}, "1"), 1);
  EXPECT_FALSE(pb.ok());
}

// A codec without a per-item decoder for the answer's encoding refuses the list at its first
// byte; it never buffers the body whole (which would be unbounded).
TEST(ListStreamTest, CodecWithoutItemDecoderFailsAtTheFirstByte) {
  Codec codec = ReplicaSetCodec();
  codec.decode_list_item = nullptr;
  ListStreamDecoder d(codec, ListEncoding::kJson);
  Status s = d.Feed(R"({"kind":"ReplicaSetList","items":[)");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().reason, "DecodeError");
  EXPECT_NE(s.error().message.find("no per-item JSON decoder for kind \"ReplicaSet\""),
            std::string::npos)
      << s.error().ToString();
  EXPECT_EQ(d.buffered_bytes(), 0u);
  EXPECT_FALSE(d.Finish().ok());
}

// on_item hears a null first (a new answer begins), then each item; an item it takes (returns
// null for) is not kept, and a later item's error path still counts it. Both encodings.
TEST(ListStreamTest, ItemsTakenByOnItemAreNotKeptAndErrorPathsCountThem) {
  for (ListEncoding encoding : {ListEncoding::kJson, ListEncoding::kProtobuf}) {
    SCOPED_TRACE(encoding == ListEncoding::kJson ? "json" : "protobuf");
    std::vector<std::string> heard;
    ListStreamDecoder d(PodCodec(), encoding, 0, [&](ObjectPtr obj) -> ObjectPtr {
      heard.push_back(obj ? obj->Meta().name : "<begin>");
      // Takes the even items.
      if (obj && (obj->Meta().name.back() - '0') % 2 == 0) return nullptr;
      return obj;
    });
    const std::string body =
        encoding == ListEncoding::kJson ? JsonList(4, "9") : ProtobufList(PodMessages(4), "9");
    ASSERT_TRUE(d.Feed(body).ok());
    auto list = d.Finish();
    ASSERT_TRUE(list.ok()) << list.error().ToString();
    EXPECT_EQ(heard, (std::vector<std::string>{"<begin>", "pod-0", "pod-1", "pod-2", "pod-3"}));
    ASSERT_EQ(list->items.size(), 2u);
    EXPECT_EQ(list->items[0]->Meta().name, "pod-1");
    EXPECT_EQ(list->items[1]->Meta().name, "pod-3");
    EXPECT_EQ(list->resource_version, "9");
  }
  // The bad item (a pod without a name) is the third one, items[2], though only one item was
  // kept before it.
  std::vector<std::string> items = PodMessages(2);
  items.push_back(Bytes(1, Bytes(1, "")));
  ListStreamDecoder d(PodCodec(), ListEncoding::kProtobuf, 0, [](ObjectPtr obj) -> ObjectPtr {
    return obj && obj->Meta().name == "pod-1" ? obj : nullptr;
  });
  Status s = d.Feed(ProtobufList(items, "8"));
  Result<ObjectList> list = s.ok() ? d.Finish() : Result<ObjectList>(s.error());
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("items[2]"), std::string::npos) << list.error().ToString();
}

}  // namespace
}  // namespace kcm::api
