// ReactionTracker on its own: a reaction runs from the event's Add to the reconcile's first write,
// with the wait behind a running reconcile of the key (key_in_flight) left out of the SLI; an item
// a timer queued starts none; a reaction carried over by a reconcile that wrote nothing goes on in
// the next reconcile, its parked time counted as stale_cache (a wake) or retry_backoff.
#include "pkg/runtime/reaction_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/metrics/first_write.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::runtime {
namespace {

using namespace std::chrono_literals;
using Item = workqueue::RateLimitingQueue::Item;

metrics::Histogram Hist(const char* family, std::vector<std::string> labels) {
  std::vector<std::string> names = {"controller"};
  if (labels.size() == 2) names.push_back("reason");
  return metrics::HistogramVec(family, "", names, {}).With(labels);
}

TEST(ReactionTrackerTest, FirstWriteEndsTheReactionLessItsWaits) {
  const std::string name = "reaction-tracker-first-write";
  FakeClock clock;
  ReactionTracker tracker(name, clock);
  const metrics::Histogram total = Hist("controller_reaction_duration_seconds", {name});
  const metrics::Histogram sli = Hist("controller_reaction_sli_duration_seconds", {name});
  const metrics::Histogram in_flight =
      Hist("controller_reaction_wait_duration_seconds", {name, "key_in_flight"});
  const uint64_t total0 = total.Count(), sli0 = sli.Count(), in_flight0 = in_flight.Count();
  const double total_sum0 = total.Sum(), sli_sum0 = sli.Sum();

  const auto added = clock.Now();
  clock.Step(2ms);  // behind a running reconcile of the key until now
  Item item{"ns/a", added, clock.Now()};
  {
    ReactionTracker::Reconcile reconcile = tracker.Begin(item);
    clock.Step(3ms);
    metrics::NoteWriteSent();
    clock.Step(10ms);
    metrics::NoteWriteSent();  // only the first write counts
  }
  EXPECT_EQ(total.Count() - total0, 1u);
  EXPECT_NEAR(total.Sum() - total_sum0, 0.005, 1e-9);
  EXPECT_EQ(sli.Count() - sli0, 1u);
  EXPECT_NEAR(sli.Sum() - sli_sum0, 0.003, 1e-9);
  EXPECT_EQ(in_flight.Count() - in_flight0, 1u);

  // Queued by a timer (no Add time): no reaction, and the probe is gone after the scope.
  {
    ReactionTracker::Reconcile reconcile = tracker.Begin(Item{"ns/a", std::nullopt, clock.Now()});
    EXPECT_EQ(metrics::CurrentFirstWriteProbe(), nullptr);
    metrics::NoteWriteSent();
  }
  EXPECT_EQ(total.Count() - total0, 1u);
}

TEST(ReactionTrackerTest, CarriedOverReactionCountsItsParkedTime) {
  const std::string name = "reaction-tracker-carry-over";
  FakeClock clock;
  ReactionTracker tracker(name, clock);
  const metrics::Histogram total = Hist("controller_reaction_duration_seconds", {name});
  const metrics::Histogram stale =
      Hist("controller_reaction_wait_duration_seconds", {name, "stale_cache"});
  const metrics::Histogram backoff =
      Hist("controller_reaction_wait_duration_seconds", {name, "retry_backoff"});
  const uint64_t total0 = total.Count(), stale0 = stale.Count(), backoff0 = backoff.Count();
  const double total_sum0 = total.Sum(), stale_sum0 = stale.Sum();

  const auto added = clock.Now();
  {
    ReactionTracker::Reconcile reconcile = tracker.Begin(Item{"ns/a", added, added});
    clock.Step(1ms);
    reconcile.CarryOver(/*for_wake=*/true);  // a stale cache: parked from t=1 ms
  }
  EXPECT_EQ(total.Count() - total0, 0u);  // nothing written yet
  clock.Step(7ms);                        // the wake queues the key at t=8 ms
  {
    ReactionTracker::Reconcile reconcile = tracker.Begin(Item{"ns/a", std::nullopt, clock.Now()});
    clock.Step(1ms);
    metrics::NoteWriteSent();
  }
  EXPECT_EQ(total.Count() - total0, 1u);
  EXPECT_NEAR(total.Sum() - total_sum0, 0.009, 1e-9);
  EXPECT_EQ(stale.Count() - stale0, 1u);
  EXPECT_NEAR(stale.Sum() - stale_sum0, 0.007, 1e-9);
  EXPECT_EQ(backoff.Count() - backoff0, 0u);
}

}  // namespace
}  // namespace kcm::runtime
