#include <gtest/gtest.h>

#include "pkg/api/codec.h"
#include "pkg/api/generic_object.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

// Behaviour 1.9/2.3: a LIST page carries items, resourceVersion, continue and remainingItemCount.
TEST(ListTest, DecodesPodListPage) {
  Decoder d;
  std::string pod = testing::ApiTestdata("pod-10k.json");
  std::string list = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"777",)"
                     R"("continue":"tok","remainingItemCount":12},"items":[)" +
                     pod + "," + pod + "]}";
  auto l = PodCodec().decode_list(d, list);
  ASSERT_TRUE(l.ok()) << l.error().ToString();
  EXPECT_EQ(l->items.size(), 2u);
  EXPECT_EQ(l->resource_version, "777");
  EXPECT_EQ(l->continue_token, "tok");
  EXPECT_EQ(l->remaining_item_count, 12);
  EXPECT_EQ(l->items[1]->Kind(), "Pod");
  EXPECT_EQ(l->items[1]->Meta().name, "web-7d9f8b6c5d-x2k4q");
}

TEST(ListTest, LastPageHasNoContinueAndNoRemainingCount) {
  Decoder d;
  auto l = ReplicaSetCodec().decode_list(
      d, R"({"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}]})");
  ASSERT_TRUE(l.ok()) << l.error().ToString();
  EXPECT_EQ(l->continue_token, "");
  EXPECT_EQ(l->remaining_item_count, -1);
  auto* rs = dynamic_cast<const ReplicaSet*>(l->items[0].get());
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->raw_json, R"({"metadata":{"name":"a"}})");
}

TEST(ListTest, ErrorsNameTheItem) {
  Decoder d;
  auto l =
      PodCodec().decode_list(d, R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":5}}]})");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().reason, "DecodeError");
  EXPECT_NE(l.error().message.find("items[1].metadata.name"), std::string::npos)
      << l.error().message;
}

TEST(ListTest, GenericItemsTakeTheListKind) {
  Decoder d;
  auto l = GenericCodec().decode_list(
      d,
      R"({"kind":"ConfigMapList","items":[{"metadata":{"name":"c","namespace":"n"},"data":{"k":"v"}}]})");
  ASSERT_TRUE(l.ok()) << l.error().ToString();
  EXPECT_EQ(l->items[0]->Kind(), "ConfigMap");
  auto* g = dynamic_cast<const GenericObject*>(l->items[0].get());
  EXPECT_EQ(g->raw_json, R"({"metadata":{"name":"c","namespace":"n"},"data":{"k":"v"}})");
}

// Behaviour 1.8 / 2.5: event types and the object's resourceVersion.
TEST(WatchTest, DecodesModifiedPodEvent) {
  Decoder d;
  std::string frame =
      R"({"type":"MODIFIED","object":)" + testing::ApiTestdata("pod-10k.json") + "}\n";
  auto ev = PodCodec().decode_watch_event(d, frame);
  ASSERT_TRUE(ev.ok()) << ev.error().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  EXPECT_EQ(ev->resource_version, "123456789");
  ASSERT_NE(ev->object, nullptr);
  EXPECT_EQ(ev->object->Meta().namespace_, "prod");
}

TEST(WatchTest, AllTypesAndObjectBeforeType) {
  Decoder d;
  struct Case {
    const char* type;
    WatchEventType want;
  } cases[] = {{"ADDED", WatchEventType::kAdded},
               {"MODIFIED", WatchEventType::kModified},
               {"DELETED", WatchEventType::kDeleted}};
  for (const auto& c : cases) {
    auto ev = ReplicaSetCodec().decode_watch_event(
        d, std::string(R"({"object":{"metadata":{"name":"r","resourceVersion":"9"},)"
                       R"("spec":{"template":{"metadata":{"labels":{"a":"b"}}}}},"type":")") +
               c.type + "\"}");
    ASSERT_TRUE(ev.ok()) << ev.error().ToString();
    EXPECT_EQ(ev->type, c.want);
    EXPECT_EQ(ev->resource_version, "9");
    auto* rs = dynamic_cast<const ReplicaSet*>(ev->object.get());
    ASSERT_NE(rs, nullptr);
    EXPECT_EQ(rs->spec.pod_template.labels.at("a"), "b");
  }
}

// Behaviour 2.7: BOOKMARK carries the RV and the initial-events-end annotation.
TEST(WatchTest, Bookmark) {
  Decoder d;
  auto ev = PodCodec().decode_watch_event(
      d,
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"4242",)"
      R"("creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}})");
  ASSERT_TRUE(ev.ok()) << ev.error().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kBookmark);
  EXPECT_EQ(ev->resource_version, "4242");
  EXPECT_TRUE(ev->initial_events_end);
  EXPECT_EQ(ev->object, nullptr);
  auto plain = PodCodec().decode_watch_event(
      d, R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}})");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->initial_events_end);
}

// Behaviour 1.8: an ERROR's object is a Status.
TEST(WatchTest, ErrorCarriesStatus) {
  Decoder d;
  auto ev = PodCodec().decode_watch_event(
      d,
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
      R"j("message":"too old resource version: 1 (2)","reason":"Expired","code":410}})j");
  ASSERT_TRUE(ev.ok()) << ev.error().ToString();
  EXPECT_EQ(ev->type, WatchEventType::kError);
  EXPECT_EQ(ev->error.code, 410);
  EXPECT_EQ(ev->error.reason, "Expired");
  EXPECT_EQ(ev->error.message, "too old resource version: 1 (2)");
}

TEST(WatchTest, UnknownTypeAndMissingFieldsAreErrors) {
  Decoder d;
  for (const char* bad :
       {R"({"type":"WHATEVER","object":{"metadata":{"name":"p"}}})",
        R"({"object":{"metadata":{"name":"p"}}})", R"({"type":"ADDED"})",
        R"({"type":"ADDED","object":{"metadata":{"name":"p"}}} {"type":"ADDED"})"}) {
    auto ev = PodCodec().decode_watch_event(d, bad);
    ASSERT_FALSE(ev.ok()) << bad;
    EXPECT_EQ(ev.error().reason, "DecodeError");
  }
}

TEST(WatchTest, DecoderIsReusableAcrossFrames) {
  Decoder d;
  for (int i = 0; i < 3; ++i) {
    std::string name = "p" + std::to_string(i);
    auto ev = PodCodec().decode_watch_event(d, R"({"type":"ADDED","object":{"metadata":{"name":")" +
                                                   name + R"(","resourceVersion":"1"}}})");
    ASSERT_TRUE(ev.ok());
    EXPECT_EQ(ev->object->Meta().name, name);
  }
}

}  // namespace
}  // namespace kcm::api
