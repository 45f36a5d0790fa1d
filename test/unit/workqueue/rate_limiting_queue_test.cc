#include "pkg/workqueue/rate_limiting_queue.h"

#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"
#include "pkg/workqueue/default_rate_limiters.h"
#include "test/unit/workqueue/wait_until.h"

namespace kcm::workqueue {
namespace {

using testing::WaitUntil;
using namespace std::chrono_literals;

// 7.4
TEST(RateLimitingQueueTest, AddRateLimitedWaitsTheLimiterDelayAndCountsRequeues) {
  FakeClock clock;
  RateLimitingQueue q(
      {.name = "",
       .clock = &clock,
       .rate_limiter = std::make_unique<ItemExponentialFailureRateLimiter>(1s, 1h)});
  q.AddRateLimited("ns/a");
  EXPECT_EQ(q.NumRequeues("ns/a"), 1);
  EXPECT_EQ(q.Len(), 0);
  EXPECT_EQ(q.NumWaiting(), 1);
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(1s);
  ASSERT_TRUE(WaitUntil([&] { return q.Len() == 1; }));
  ASSERT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");

  q.AddRateLimited("ns/a");  // Second failure: 2 s.
  EXPECT_EQ(q.NumRequeues("ns/a"), 2);
  q.Forget("ns/a");
  EXPECT_EQ(q.NumRequeues("ns/a"), 0);
  EXPECT_EQ(q.NumWaiting(), 1) << "Forget resets the backoff, it does not unqueue the key";
}

// 7.4: without a limiter in the config the queue uses DefaultControllerRateLimiter.
TEST(RateLimitingQueueTest, DefaultsToTheControllerRateLimiter) {
  FakeClock clock;
  RateLimitingQueue q({.name = "", .clock = &clock});
  q.AddRateLimited("ns/a");
  q.AddRateLimited("ns/a");  // 10 ms; the earlier 5 ms entry wins.
  EXPECT_EQ(q.NumRequeues("ns/a"), 2);
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(5ms);
  ASSERT_TRUE(WaitUntil([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "ns/a");
}

}  // namespace
}  // namespace kcm::workqueue
