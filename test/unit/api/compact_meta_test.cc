// The compact metadata types of the cached pod record (docs/design/compact-pod-
// record.md): OptionalTime (8 bytes, Time::min() as "absent"), Annotations (an 8-byte shared
// immutable value, null when empty) and SharedString (the interned node name).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/intern_table.h"
#include "pkg/api/object_meta.h"
#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/time.h"
#include "test/unit/api/protobuf_writer.h"

namespace kcm::api {
namespace {

using std::chrono::seconds;

TEST(OptionalTimeTest, ReadsLikeAnOptionalInEightBytes) {
  static_assert(sizeof(OptionalTime) == 8);
  OptionalTime none;
  EXPECT_FALSE(none.has_value());
  EXPECT_FALSE(none);
  EXPECT_EQ(none, std::nullopt);
  EXPECT_THROW((void)none.value(), std::bad_optional_access);
  const Time t = *ParseRFC3339("2026-11-29T10:00:00Z");
  EXPECT_EQ(none.value_or(t), t);

  OptionalTime set = t;
  EXPECT_TRUE(set.has_value());
  EXPECT_EQ(*set, t);
  EXPECT_EQ(set, t);
  EXPECT_NE(set, none);
  // Ordered as std::optional: absent first.
  EXPECT_LT(none, set);
  EXPECT_LT(set, OptionalTime(t + seconds(1)));

  // From and to std::optional<Time>, both ways, both states.
  std::optional<Time> opt = set;
  EXPECT_EQ(opt, std::optional<Time>(t));
  EXPECT_EQ(OptionalTime(opt), set);
  EXPECT_EQ(static_cast<std::optional<Time>>(none), std::nullopt);
  EXPECT_FALSE(OptionalTime(std::optional<Time>()).has_value());

  set.reset();
  EXPECT_FALSE(set.has_value());
  set = std::nullopt;
  EXPECT_FALSE(set.has_value());
}

TEST(OptionalTimeTest, TheSentinelIsNeverAValue) {
  // Time::min() is "absent"; assigning it stores the earliest representable time instead.
  OptionalTime earliest = Time::min();
  EXPECT_TRUE(earliest.has_value());
  EXPECT_EQ(*earliest, kMinTime);
  // Times before Time's range (Go's zero time) saturate to kMinTime, a value, not "absent".
  EXPECT_EQ(*ParseRFC3339("0001-01-01T00:00:00Z"), kMinTime);
}

TEST(OptionalTimeTest, JsonDecodeKeepsPresentAndAbsentTimes) {
  Decoder d;
  // Go's zero time as creationTimestamp (below Time's range), no deletionTimestamp, a null
  // lastTransitionTime on the Ready condition.
  auto p = DecodePod(d, R"({"metadata":{"name":"p","creationTimestamp":"0001-01-01T00:00:00Z"},
      "status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":null}]}})");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  ASSERT_TRUE((*p)->metadata.creation_timestamp.has_value());
  EXPECT_EQ(*(*p)->metadata.creation_timestamp, kMinTime);
  EXPECT_FALSE((*p)->metadata.deletion_timestamp.has_value());
  EXPECT_FALSE((*p)->ready_transition_time.has_value());

  auto q = DecodePod(d, R"({"metadata":{"name":"q","deletionTimestamp":"2026-11-29T10:00:00Z"},
      "status":{"conditions":[{"type":"Ready","status":"True",
                               "lastTransitionTime":"2026-11-29T09:00:00Z"}]}})");
  ASSERT_TRUE(q.ok()) << q.error().ToString();
  EXPECT_FALSE((*q)->metadata.creation_timestamp.has_value());
  EXPECT_EQ((*q)->metadata.deletion_timestamp, *ParseRFC3339("2026-11-29T10:00:00Z"));
  EXPECT_EQ((*q)->ready_transition_time, *ParseRFC3339("2026-11-29T09:00:00Z"));
  EXPECT_FALSE((*q)->IsActive()) << "being deleted";
}

TEST(OptionalTimeTest, ProtobufDecodeKeepsPresentAndAbsentTimes) {
  using testing::Bytes;
  using testing::VarintField;
  // Go's zero time: -62135596800 s since the epoch, below Time's range.
  const uint64_t go_zero = static_cast<uint64_t>(int64_t{-62135596800});
  const std::string meta = Bytes(1, "p") + Bytes(8, VarintField(1, go_zero));
  const std::string ready = Bytes(1, "Ready") + Bytes(2, "True");  // no lastTransitionTime
  const std::string pod = Bytes(1, meta) + Bytes(3, Bytes(2, ready));
  Decoder d;
  auto p = DecodePodProtobuf(d, testing::Envelope("Pod", pod));
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  ASSERT_TRUE((*p)->metadata.creation_timestamp.has_value());
  EXPECT_EQ(*(*p)->metadata.creation_timestamp, kMinTime);
  EXPECT_FALSE((*p)->metadata.deletion_timestamp.has_value());
  EXPECT_EQ((*p)->ready, ConditionStatus::kTrue);
  EXPECT_FALSE((*p)->ready_transition_time.has_value());

  // Epoch second 0 is a time like any other (not "absent").
  const std::string meta2 = Bytes(1, "q") + Bytes(9, VarintField(1, 0));
  auto q = DecodePodProtobuf(d, testing::Envelope("Pod", Bytes(1, meta2)));
  ASSERT_TRUE(q.ok()) << q.error().ToString();
  EXPECT_EQ((*q)->metadata.deletion_timestamp, Time());
}

TEST(AnnotationsTest, EmptyIsNullAndNonEmptyReadsLikeAMap) {
  static_assert(sizeof(Annotations) == 8);
  Annotations empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_EQ(empty.find("a"), empty.end());
  EXPECT_EQ(empty, Annotations(std::map<std::string, std::string>{}));
  EXPECT_TRUE(Annotations(std::map<std::string, std::string>{}).SharesStorageWith(empty))
      << "an empty map is stored as null";

  Annotations a = {{"b", "2"}, {"a", "1"}};
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a.begin()->first, "a") << "key order";
  EXPECT_EQ(a.at("b"), "2");
  EXPECT_THROW((void)a.at("c"), std::out_of_range);
  EXPECT_TRUE(a.contains("a"));
  EXPECT_EQ(a.count("c"), 0u);
  const std::map<std::string, std::string>& as_map = a;
  EXPECT_EQ(as_map, (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(a, (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(a, (Annotations{{"a", "1"}, {"b", "2"}})) << "equal content, different storage";
  EXPECT_NE(a, (Annotations{{"a", "1"}}));
  EXPECT_NE(a, empty);
}

TEST(AnnotationsTest, WritesBuildANewValueAndLeaveCopiesAlone) {
  const Annotations cached = {{"deployment.kubernetes.io/revision", "3"},
                              {"deprecated.deployment.rollback.to", "2"}};
  Annotations copy = cached;
  EXPECT_TRUE(copy.SharesStorageWith(cached)) << "a copy shares the map";
  copy.Set("deployment.kubernetes.io/revision", "4");
  EXPECT_FALSE(copy.SharesStorageWith(cached));
  EXPECT_EQ(cached.at("deployment.kubernetes.io/revision"), "3") << "the cached value unchanged";
  EXPECT_EQ(copy.at("deployment.kubernetes.io/revision"), "4");
  EXPECT_TRUE(copy.Erase("deprecated.deployment.rollback.to"));
  EXPECT_FALSE(copy.Erase("deprecated.deployment.rollback.to"));
  EXPECT_EQ(copy, (std::map<std::string, std::string>{{"deployment.kubernetes.io/revision", "4"}}));
  EXPECT_EQ(cached.size(), 2u);
  copy.Erase("deployment.kubernetes.io/revision");
  EXPECT_TRUE(copy.empty());
  EXPECT_TRUE(copy.SharesStorageWith(Annotations())) << "erasing the last key gives null";
}

TEST(AnnotationsTest, DeploymentStyleEditThroughAMapKeepsEveryEntry) {
  // The Deployment controller edits a copy as a std::map (SetDeploymentRevision inserts the
  // revision key even when it sets it to "") and assigns the map back: the value holds exactly
  // the map's entries, empty values included.
  ObjectMeta d;
  d.annotations = {{"kubernetes.io/change-cause", "v2"}};
  std::map<std::string, std::string> edited = d.annotations;
  edited["deployment.kubernetes.io/revision"];  // what operator[] leaves behind: ""
  edited["deployment.kubernetes.io/max-replicas"] = "4";
  d.annotations = edited;
  EXPECT_EQ(d.annotations, edited);
  EXPECT_EQ(d.annotations.at("deployment.kubernetes.io/revision"), "");
  EXPECT_EQ(d.annotations.size(), 3u);
}

TEST(AnnotationsTest, PodsKeepNoAnnotationsAndFullObjectsKeepAll) {
  Decoder d;
  auto p = DecodePod(d, R"({"metadata":{"name":"p","annotations":{"a":"1",
      "controller.kubernetes.io/pod-deletion-cost":"5"}}})");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_TRUE((*p)->metadata.annotations.empty());
  EXPECT_EQ((*p)->deletion_cost, 5);
}

// Finalizers are not kept (no controller reads them; object_meta.h): both decoders skip them, a
// malformed list included, and read the fields around them.
TEST(ObjectMetaTest, FinalizersAreSkippedByBothDecoders) {
  Decoder d;
  auto p = DecodePod(d, R"({"metadata":{"name":"p","finalizers":["x/y","z"],"uid":"u1"}})");
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_EQ((*p)->metadata.name, "p");
  EXPECT_EQ((*p)->metadata.uid, "u1");
  auto odd = DecodePod(d, R"({"metadata":{"name":"p","finalizers":{"not":"a list"}}})");
  ASSERT_TRUE(odd.ok()) << odd.error().ToString();
  EXPECT_EQ((*odd)->metadata.name, "p");
  const std::string pb = testing::Bytes(1, testing::Bytes(1, "p") + testing::Bytes(14, "x/y") +
                                               testing::Bytes(14, "z") + testing::Bytes(5, "u1"));
  auto q = DecodePodProtobuf(d, testing::Envelope("Pod", pb));
  ASSERT_TRUE(q.ok()) << q.error().ToString();
  EXPECT_EQ((*q)->metadata.name, "p");
  EXPECT_EQ((*q)->metadata.uid, "u1");
}

TEST(SharedStringTest, NodeNamesAreInternedPerDecoder) {
  static_assert(sizeof(SharedString) == 8);
  Decoder d;
  auto json_pod = [&](const std::string& name, const std::string& node) {
    auto p = DecodePod(
        d, R"({"metadata":{"name":")" + name + R"("},"spec":{"nodeName":")" + node + R"("}})");
    EXPECT_TRUE(p.ok());
    return *p;
  };
  auto a = json_pod("a", "node-with-a-name-longer-than-fifteen");
  auto b = json_pod("b", "node-with-a-name-longer-than-fifteen");
  auto c = json_pod("c", "node-2");
  const std::string pb =
      testing::Bytes(1, testing::Bytes(1, "e")) + testing::Bytes(2, testing::Bytes(10, "node-2"));
  auto e = DecodePodProtobuf(d, testing::Envelope("Pod", pb));
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(a->node_name, "node-with-a-name-longer-than-fifteen");
  EXPECT_TRUE(a->node_name.SharesStorageWith(b->node_name));
  EXPECT_FALSE(a->node_name.SharesStorageWith(c->node_name));
  EXPECT_TRUE(c->node_name.SharesStorageWith((*e)->node_name)) << "JSON and protobuf share";
  EXPECT_EQ(d.interner().SlotCount().strings, 2u);

  auto none = DecodePod(d, R"({"metadata":{"name":"n"},"spec":{"nodeName":""}})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->node_name.empty());
  EXPECT_EQ((*none)->node_name, "");

  // A string only the table holds is dropped by a sweep; one a pod holds stays.
  a.reset();
  b.reset();
  d.interner().Sweep();
  EXPECT_EQ(d.interner().SlotCount().strings, 1u);
  EXPECT_EQ(c->node_name, "node-2");
}

// The namespace is interned like the node name (one string per namespace, JSON and protobuf
// alike), and the resourceVersion is held as 8 bytes; labels and owner references are 8-byte
// values too.
TEST(SharedStringTest, NamespacesAreInternedPerDecoder) {
  static_assert(sizeof(Labels) == 8 && sizeof(OwnerReferences) == 8);
  Decoder d;
  auto a = DecodePod(d, R"({"metadata":{"name":"a","namespace":"team-with-a-long-name"}})");
  auto b = DecodePod(d, R"({"metadata":{"name":"b","namespace":"team-with-a-long-name"}})");
  auto c = DecodePod(d, R"({"metadata":{"name":"c","namespace":"other"}})");
  const std::string pb =
      testing::Bytes(1, testing::Bytes(1, "e") + testing::Bytes(3, "team-with-a-long-name") +
                            testing::Bytes(6, "77"));
  auto e = DecodePodProtobuf(d, testing::Envelope("Pod", pb));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ((*a)->metadata.namespace_, "team-with-a-long-name");
  EXPECT_EQ((*e)->metadata.namespace_, "team-with-a-long-name");
  EXPECT_EQ((*e)->metadata.resource_version, "77");
  EXPECT_TRUE((*a)->metadata.namespace_.SharesStorageWith((*b)->metadata.namespace_));
  EXPECT_TRUE((*a)->metadata.namespace_.SharesStorageWith((*e)->metadata.namespace_));
  EXPECT_FALSE((*a)->metadata.namespace_.SharesStorageWith((*c)->metadata.namespace_));
  EXPECT_EQ((*c)->metadata.namespace_ + "/" + (*c)->metadata.name, "other/c");
}

TEST(SharedStringTest, ReadsLikeAString) {
  SharedString s = "node-1";
  SharedString copy = s;
  EXPECT_TRUE(copy.SharesStorageWith(s));
  const std::string& str = s;
  EXPECT_EQ(str, "node-1");
  EXPECT_EQ(s.view(), "node-1");
  EXPECT_EQ(s.size(), 6u);
  EXPECT_EQ(s, SharedString("node-1")) << "equal text, different storage";
  EXPECT_NE(s, SharedString("node-2"));
  EXPECT_LT(s, SharedString("node-2"));
  EXPECT_TRUE(SharedString("").empty());
  EXPECT_EQ(std::string(SharedString().c_str()), "");
}

}  // namespace
}  // namespace kcm::api
