#include "pkg/workqueue/default_rate_limiters.h"

#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"

namespace kcm::workqueue {
namespace {

using namespace std::chrono_literals;

// 7.4
TEST(ItemExponentialFailureRateLimiterTest, DoublesPerFailureCapsAndForgets) {
  ItemExponentialFailureRateLimiter limiter(1ms, 1s);
  EXPECT_EQ(limiter.When("ns/a"), 1ms);
  EXPECT_EQ(limiter.When("ns/a"), 2ms);
  EXPECT_EQ(limiter.When("ns/a"), 4ms);
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 3);
  EXPECT_EQ(limiter.When("ns/b"), 1ms) << "failures are per key";
  for (int i = 0; i < 7; ++i) limiter.When("ns/a");  // 8ms ... 512ms
  EXPECT_EQ(limiter.When("ns/a"), 1s) << "1024 ms is capped";
  limiter.Forget("ns/a");
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 0);
  EXPECT_EQ(limiter.When("ns/a"), 1ms);
}

// 7.4
TEST(ItemExponentialFailureRateLimiterTest, LongFailureStreakSaturatesAtMax) {
  ItemExponentialFailureRateLimiter limiter(5ms, 1000s);
  Clock::duration last{};
  for (int i = 0; i < 200; ++i) last = limiter.When("ns/a");
  EXPECT_EQ(last, 1000s);
}

// 7.4
TEST(ItemFastSlowRateLimiterTest, FastThenSlow) {
  ItemFastSlowRateLimiter limiter(5ms, 10s, 3);
  EXPECT_EQ(limiter.When("ns/a"), 5ms);
  EXPECT_EQ(limiter.When("ns/a"), 5ms);
  EXPECT_EQ(limiter.When("ns/a"), 5ms);
  EXPECT_EQ(limiter.When("ns/a"), 10s);
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 4);
  EXPECT_EQ(limiter.When("ns/b"), 5ms);
  limiter.Forget("ns/a");
  EXPECT_EQ(limiter.When("ns/a"), 5ms);
}

// 7.4
TEST(BucketRateLimiterTest, BurstThenQpsOnTheClock) {
  FakeClock clock;
  BucketRateLimiter limiter(clock, 10, 3);
  EXPECT_EQ(limiter.When("ns/a"), 0s);
  EXPECT_EQ(limiter.When("ns/b"), 0s);
  EXPECT_EQ(limiter.When("ns/c"), 0s);
  EXPECT_EQ(limiter.When("ns/d"), 100ms) << "burst spent: one token per 100 ms";
  EXPECT_EQ(limiter.When("ns/e"), 200ms) << "reservations queue up behind each other";
  clock.Step(200ms);  // Pays back the two reservations.
  EXPECT_EQ(limiter.When("ns/f"), 100ms);
  clock.Step(10s);  // Refills, but never beyond the burst.
  EXPECT_EQ(limiter.When("ns/g"), 0s);
  EXPECT_EQ(limiter.When("ns/h"), 0s);
  EXPECT_EQ(limiter.When("ns/i"), 0s);
  EXPECT_EQ(limiter.When("ns/j"), 100ms);
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 0);
}

// 7.4
TEST(MaxOfRateLimiterTest, LongestDelayAndForgetsAll) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(1ms, 1s));
  limiters.push_back(std::make_unique<ItemFastSlowRateLimiter>(3ms, 1s, 2));
  MaxOfRateLimiter limiter(std::move(limiters));
  EXPECT_EQ(limiter.When("ns/a"), 3ms);  // max(1, 3)
  EXPECT_EQ(limiter.When("ns/a"), 3ms);  // max(2, 3)
  EXPECT_EQ(limiter.When("ns/a"), 1s);   // max(4 ms, slow 1 s)
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 3);
  limiter.Forget("ns/a");
  EXPECT_EQ(limiter.NumRequeues("ns/a"), 0);
  EXPECT_EQ(limiter.When("ns/a"), 3ms);
}

// 7.4: per-item 5 ms × 2^failures capped at 1000 s.
TEST(DefaultControllerRateLimiterTest, PerItemExponentialFrom5msCappedAt1000s) {
  FakeClock clock;
  auto limiter = DefaultControllerRateLimiter(clock);
  EXPECT_EQ(limiter->When("ns/a"), 5ms);
  EXPECT_EQ(limiter->When("ns/a"), 10ms);
  EXPECT_EQ(limiter->When("ns/a"), 20ms);
  EXPECT_EQ(limiter->NumRequeues("ns/a"), 3);
  Clock::duration last{};
  for (int i = 3; i < 40; ++i) {
    clock.Step(1s);  // Keep the bucket full so only the per-item backoff shows.
    last = limiter->When("ns/a");
  }
  EXPECT_EQ(last, 1000s);
  limiter->Forget("ns/a");
  EXPECT_EQ(limiter->NumRequeues("ns/a"), 0);
  EXPECT_EQ(limiter->When("ns/a"), 5ms);
}

// 7.4: token bucket 10 qps, burst 100, across all keys.
TEST(DefaultControllerRateLimiterTest, OverallBucket10QpsBurst100) {
  FakeClock clock;
  auto limiter = DefaultControllerRateLimiter(clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(limiter->When("ns/k" + std::to_string(i)), 5ms) << i;
  }
  EXPECT_EQ(limiter->When("ns/k100"), 100ms);
  EXPECT_EQ(limiter->When("ns/k101"), 200ms);
}

}  // namespace
}  // namespace kcm::workqueue
