#include "pkg/client/rate_limiter.h"

#include <gtest/gtest.h>

#include <thread>

#include "pkg/client/api_errors.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::client {
namespace {

using std::chrono::milliseconds;

// 1.4 token bucket: burst tokens up front, then qps per second.
TEST(TokenBucketRateLimiterTest, BurstThenRefillAtQPS) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(2, 3, clock);
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
  clock.Step(milliseconds(499));
  EXPECT_FALSE(limiter.TryAccept());
  clock.Step(milliseconds(1));
  EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
  // The bucket never holds more than burst.
  clock.Step(std::chrono::seconds(100));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryAccept());
  EXPECT_FALSE(limiter.TryAccept());
}

// 1.4 Wait blocks for exactly the deficit, measured on the clock.
TEST(TokenBucketRateLimiterTest, WaitSleepsUntilTokenRefills) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(10, 1, clock);
  ASSERT_TRUE(limiter.Wait({}).ok());  // the burst token
  const auto start = clock.Now();
  Clock::time_point done_at{};
  std::thread waiter([&] {
    ASSERT_TRUE(limiter.Wait({}).ok());
    done_at = clock.Now();
  });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(milliseconds(50));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(done_at, Clock::time_point{});  // still waiting at 50 ms
  clock.Step(milliseconds(50));
  waiter.join();
  EXPECT_EQ(done_at - start, milliseconds(100));
}

// 1.4 a canceled Wait returns Canceled and gives its reserved token back.
TEST(TokenBucketRateLimiterTest, WaitCanceledByStopToken) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(1, 1, clock);
  ASSERT_TRUE(limiter.TryAccept());
  std::stop_source stop;
  Status result;
  std::thread waiter([&] { result = limiter.Wait(stop.get_token()); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  stop.request_stop();
  waiter.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, errors::reason::kCanceled);
  clock.Step(std::chrono::seconds(1));
  EXPECT_TRUE(limiter.TryAccept());  // the canceled reservation did not consume the refill
}

// 1.4 negative QPS = no limiter; zero = client-go defaults 5 QPS / burst 10.
TEST(NewRateLimiterTest, NegativeDisablesZeroMeansDefaults) {
  FakeClock clock;
  auto none = NewRateLimiter(-1, 0, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(none->TryAccept());
  auto defaults = NewRateLimiter(0, 0, clock);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(defaults->TryAccept()) << i;
  EXPECT_FALSE(defaults->TryAccept());
  clock.Step(milliseconds(200));
  EXPECT_TRUE(defaults->TryAccept());
  EXPECT_FALSE(defaults->TryAccept());
}

// Reserve takes a token at once and says when it may be used, queued in arrival order with the
// other reservations; Unreserve hands back one not used, so the next reservation gets its time.
TEST(TokenBucketRateLimiterTest, ReservationsQueueInOrderAndGoBack) {
  FakeClock clock;
  TokenBucketRateLimiter limiter(/*qps=*/2, /*burst=*/1, clock);
  const Clock::time_point t0 = clock.Now();
  EXPECT_EQ(limiter.Reserve(), t0);  // the burst's token
  EXPECT_EQ(limiter.Reserve(), t0 + std::chrono::milliseconds(500));
  EXPECT_EQ(limiter.Reserve(), t0 + std::chrono::milliseconds(1000));
  limiter.Unreserve();
  EXPECT_EQ(limiter.Reserve(), t0 + std::chrono::milliseconds(1000));
  EXPECT_FALSE(limiter.TryAccept());
  NoopRateLimiter none;
  EXPECT_LE(none.Reserve(), clock.Now());
}

}  // namespace
}  // namespace kcm::client
