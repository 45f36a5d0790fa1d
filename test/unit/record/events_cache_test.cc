// EventCorrelator (E2): de-duplication into a count patch, aggregation of similar events,
// the per-object spam filter, all on a FakeClock.
#include "pkg/record/events_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "pkg/api/json.h"
#include "pkg/api/time.h"
#include "pkg/record/lru_cache.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::record {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

api::Event MakeEvent(const std::string& message, const std::string& reason = "ScalingReplicaSet",
                     const std::string& object = "web") {
  api::Event e;
  e.metadata.name = object + ".17a";
  e.metadata.namespace_ = "prod";
  e.involved_object = {"Deployment", "prod", object, "uid-1", "apps/v1", "42", ""};
  e.reason = reason;
  e.message = message;
  e.type = "Normal";
  e.source.component = "deployment-controller";
  e.reporting_component = "deployment-controller";
  e.count = 1;
  return e;
}

// What the broadcaster does after a successful write: remember the server's copy.
api::Event Written(api::Event e, const std::string& rv) {
  e.metadata.resource_version = rv;
  return e;
}

TEST(EventCorrelatorTest, RepeatedEventBecomesCountPatchOnTheFirstEvent) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  api::Event first = MakeEvent("Scaled up replica set web-1 to 3");
  first.first_timestamp = first.last_timestamp = clock.WallNow();
  auto r1 = correlator.EventCorrelate(first);
  ASSERT_FALSE(r1.skip);
  EXPECT_TRUE(r1.patch.empty());
  EXPECT_EQ(r1.event.count, 1);
  correlator.UpdateState(Written(r1.event, "100"));

  clock.Step(seconds(30));
  api::Event again = MakeEvent("Scaled up replica set web-1 to 3");
  again.metadata.name = "web.17b";  // a new name from the recorder...
  again.first_timestamp = again.last_timestamp = clock.WallNow();
  auto r2 = correlator.EventCorrelate(again);
  ASSERT_FALSE(r2.skip);
  // ...but the repeat targets the stored Event, keeping its first timestamp.
  EXPECT_EQ(r2.event.metadata.name, "web.17a");
  EXPECT_EQ(r2.event.metadata.resource_version, "100");
  EXPECT_EQ(r2.event.count, 2);
  EXPECT_EQ(r2.event.first_timestamp, first.first_timestamp);
  auto patch = api::json::Parse(r2.patch);
  ASSERT_TRUE(patch.ok()) << r2.patch;
  EXPECT_EQ(api::json::Serialize(*patch), R"({"count":2,"lastTimestamp":")" +
                                              api::FormatTime(*again.last_timestamp) +
                                              R"(","message":"Scaled up replica set web-1 to 3"})");

  auto r3 = correlator.EventCorrelate(again);
  EXPECT_EQ(r3.event.count, 3);
}

TEST(EventCorrelatorTest, DifferentMessageIsADifferentEvent) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  auto r1 = correlator.EventCorrelate(MakeEvent("a"));
  auto r2 = correlator.EventCorrelate(MakeEvent("b"));
  EXPECT_EQ(r1.event.count, 1);
  EXPECT_EQ(r2.event.count, 1);
  EXPECT_TRUE(r2.patch.empty());
}

TEST(EventCorrelatorTest, TenSimilarEventsAggregate) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  for (int i = 0; i < 9; ++i) {
    auto r = correlator.EventCorrelate(MakeEvent("message " + std::to_string(i)));
    ASSERT_FALSE(r.skip);
    EXPECT_EQ(r.event.message, "message " + std::to_string(i));
    clock.Step(seconds(10));
  }
  auto tenth = correlator.EventCorrelate(MakeEvent("message 9"));
  ASSERT_FALSE(tenth.skip);
  EXPECT_EQ(tenth.event.message, "(combined from similar events): message 9");
  EXPECT_EQ(tenth.event.count, 1);
  EXPECT_TRUE(tenth.patch.empty());
  EXPECT_EQ(tenth.event.metadata.name, EventName("web", clock.WallNow()));
  EXPECT_EQ(tenth.event.reason, "ScalingReplicaSet");
  EXPECT_EQ(tenth.event.involved_object.name, "web");
  // client-go EventAggregator.EventAggregate builds the combined event with source but without
  // reportingComponent/reportingInstance.
  EXPECT_EQ(tenth.event.source.component, "deployment-controller");
  EXPECT_EQ(tenth.event.reporting_component, "");
  EXPECT_EQ(tenth.event.reporting_instance, "");
  correlator.UpdateState(Written(tenth.event, "7"));

  // Every further similar event bumps the one aggregate Event.
  auto eleventh = correlator.EventCorrelate(MakeEvent("message 10"));
  EXPECT_EQ(eleventh.event.metadata.name, tenth.event.metadata.name);
  EXPECT_EQ(eleventh.event.count, 2);
  EXPECT_EQ(eleventh.event.message, "(combined from similar events): message 10");
  EXPECT_NE(eleventh.patch.find(R"("count":2)"), std::string::npos) << eleventh.patch;
}

TEST(EventCorrelatorTest, SimilarEventsMoreThanTenMinutesApartDoNotAggregate) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  for (int i = 0; i < 12; ++i) {
    auto r = correlator.EventCorrelate(MakeEvent("message " + std::to_string(i)));
    EXPECT_EQ(r.event.message, "message " + std::to_string(i));
    clock.Step(minutes(10) + seconds(1));
  }
}

TEST(EventCorrelatorTest, OtherReasonsAndObjectsAggregateSeparately) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  for (int i = 0; i < 5; ++i) {
    (void)correlator.EventCorrelate(MakeEvent("m" + std::to_string(i), "ReasonA"));
    (void)correlator.EventCorrelate(MakeEvent("m" + std::to_string(i), "ReasonB"));
    (void)correlator.EventCorrelate(MakeEvent("m" + std::to_string(i), "ReasonA", "other"));
  }
  auto r = correlator.EventCorrelate(MakeEvent("m5", "ReasonA"));
  EXPECT_EQ(r.event.message, "m5");
}

TEST(EventCorrelatorTest, SpamFilterBurst25ThenOnePerFiveMinutes) {  // E2
  FakeClock clock;
  EventCorrelator correlator(clock);
  for (int i = 0; i < 25; ++i) {
    EXPECT_FALSE(correlator.EventCorrelate(MakeEvent("same")).skip) << i;
  }
  EXPECT_TRUE(correlator.EventCorrelate(MakeEvent("same")).skip);
  EXPECT_TRUE(correlator.EventCorrelate(MakeEvent("another message")).skip);
  // Another object from the same source has its own bucket.
  EXPECT_FALSE(correlator.EventCorrelate(MakeEvent("same", "ScalingReplicaSet", "api")).skip);

  clock.Step(minutes(4) + seconds(59));
  EXPECT_TRUE(correlator.EventCorrelate(MakeEvent("same")).skip);
  clock.Step(seconds(1));
  auto refilled = correlator.EventCorrelate(MakeEvent("same"));
  EXPECT_FALSE(refilled.skip);
  // Filtered repeats were still counted, so the one that passes carries the full count.
  EXPECT_EQ(refilled.event.count, 28);
  EXPECT_TRUE(correlator.EventCorrelate(MakeEvent("same")).skip);
}

TEST(EventNameTest, ObjectNameDotHexUnixNanos) {  // E1
  const api::Time t = api::Time{} + std::chrono::nanoseconds(0x17a2b3c4d5e6f708LL);
  EXPECT_EQ(EventName("web-5d8f", t), "web-5d8f.17a2b3c4d5e6f708");
}

TEST(LruCacheTest, EvictsLeastRecentlyUsed) {  // E2 (the LRU bounding the correlator's state)
  LruCache<int> cache(2);
  cache.Add("a", 1);
  cache.Add("b", 2);
  ASSERT_NE(cache.Get("a"), nullptr);  // a is now the most recent
  cache.Add("c", 3);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b"), nullptr);
  ASSERT_NE(cache.Get("a"), nullptr);
  EXPECT_EQ(*cache.Get("a"), 1);
  cache.Add("a", 10);
  EXPECT_EQ(*cache.Get("a"), 10);
}

}  // namespace
}  // namespace kcm::record
