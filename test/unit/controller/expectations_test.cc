#include "pkg/controller/expectations.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::controller {
namespace {

using namespace std::chrono_literals;

constexpr char kKey[] = "default/rs";

// R2: a controller with no record has nothing to wait for.
TEST(ControllerExpectationsTest, NoRecordIsSatisfied) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  EXPECT_FALSE(exp.GetExpectations(kKey).has_value());
}

// R2: satisfied once both counters are at or below zero.
TEST(ControllerExpectationsTest, SatisfiedWhenAllObserved) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  exp.ExpectCreations(kKey, 2);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
  exp.CreationObserved(kKey);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
  exp.CreationObserved(kKey);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  // Observing more than expected (another actor's pod) keeps it satisfied.
  exp.CreationObserved(kKey);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  EXPECT_EQ(exp.GetExpectations(kKey)->add, -1);

  exp.ExpectDeletions(kKey, 1);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
  exp.DeletionObserved(kKey);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
}

// R2: a record older than 5 minutes counts as satisfied (strictly older, as upstream).
TEST(ControllerExpectationsTest, ExpiresAfterFiveMinutes) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  exp.ExpectCreations(kKey, 3);
  clock.Step(5min);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
  clock.Step(1ns);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  // The record is still there; a new expectation restarts the TTL.
  exp.ExpectDeletions(kKey, 1);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
}

// R2: ExpectCreations/ExpectDeletions reset the whole record and its timestamp; Lower/Raise
// adjust the counters and keep the timestamp.
TEST(ControllerExpectationsTest, ExpectResetsRecordLowerRaiseKeepTimestamp) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  exp.SetExpectations(kKey, 3, 4);
  const auto first = exp.GetExpectations(kKey)->timestamp;
  clock.Step(1min);
  exp.RaiseExpectations(kKey, 2, 1);
  exp.LowerExpectations(kKey, 1, 0);
  EXPECT_EQ(exp.GetExpectations(kKey)->add, 4);
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 5);
  EXPECT_EQ(exp.GetExpectations(kKey)->timestamp, first);

  exp.ExpectCreations(kKey, 1);
  auto rec = exp.GetExpectations(kKey);
  EXPECT_EQ(rec->add, 1);
  EXPECT_EQ(rec->del, 0);
  EXPECT_EQ(rec->timestamp, first + 1min);
}

// R2 (R4: RS deleted → its expectations go): DeleteExpectations forgets the record; Lower/Raise
// without a record do not create one.
TEST(ControllerExpectationsTest, DeleteExpectationsAndNoImplicitRecord) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  exp.ExpectCreations(kKey, 2);
  exp.DeleteExpectations(kKey);
  EXPECT_FALSE(exp.GetExpectations(kKey).has_value());
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  exp.RaiseExpectations(kKey, 1, 1);
  exp.CreationObserved(kKey);
  EXPECT_FALSE(exp.GetExpectations(kKey).has_value());
}

// R2: observations from many informer/worker threads are all counted.
TEST(ControllerExpectationsTest, ConcurrentObservationsAreAllCounted) {
  FakeClock clock;
  ControllerExpectations exp(clock);
  exp.ExpectCreations(kKey, 8000);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) exp.CreationObserved(kKey);
      });
    }
  }
  EXPECT_EQ(exp.GetExpectations(kKey)->add, 0);
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
}

// R2: deletions track the set of pod keys; only keys in the set count, each once.
TEST(UIDTrackingControllerExpectationsTest, DeletionObservedCountsOnlyExpectedKeysOnce) {
  FakeClock clock;
  UIDTrackingControllerExpectations exp(clock);
  exp.ExpectDeletions(kKey, {"default/a", "default/b"});
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 2);
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));

  exp.DeletionObserved(kKey, "default/unrelated");
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 2);
  exp.DeletionObserved(kKey, "default/a");
  exp.DeletionObserved(kKey, "default/a");  // a duplicate event (update + delete) counts once
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 1);
  EXPECT_EQ(exp.GetUIDs(kKey), (std::set<std::string>{"default/b"}));
  EXPECT_FALSE(exp.SatisfiedExpectations(kKey));
  exp.DeletionObserved(kKey, "default/b");
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
  EXPECT_TRUE(exp.GetUIDs(kKey).empty());
}

// R2: duplicate keys in one ExpectDeletions count once; a new ExpectDeletions replaces the set.
TEST(UIDTrackingControllerExpectationsTest, ExpectDeletionsReplacesSet) {
  FakeClock clock;
  UIDTrackingControllerExpectations exp(clock);
  exp.ExpectDeletions(kKey, {"default/a", "default/a"});
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 1);
  exp.ExpectDeletions(kKey, {"default/c"});
  exp.DeletionObserved(kKey, "default/a");
  EXPECT_EQ(exp.GetExpectations(kKey)->del, 1);
  exp.DeletionObserved(kKey, "default/c");
  EXPECT_TRUE(exp.SatisfiedExpectations(kKey));
}

// R2, R4: DeleteExpectations drops the counters and the key set.
TEST(UIDTrackingControllerExpectationsTest, DeleteExpectationsDropsKeys) {
  FakeClock clock;
  UIDTrackingControllerExpectations exp(clock);
  exp.ExpectCreations(kKey, 1);
  exp.ExpectDeletions(kKey, {"default/a"});
  exp.DeleteExpectations(kKey);
  EXPECT_FALSE(exp.GetExpectations(kKey).has_value());
  EXPECT_TRUE(exp.GetUIDs(kKey).empty());
  exp.DeletionObserved(kKey, "default/a");
  EXPECT_FALSE(exp.GetExpectations(kKey).has_value());
}

}  // namespace
}  // namespace kcm::controller
