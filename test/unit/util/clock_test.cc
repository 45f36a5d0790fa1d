#include "pkg/util/clock.h"

#include <gtest/gtest.h>

#include <thread>

#include "pkg/util/testing/fake_clock.h"

namespace kcm {
namespace {

using namespace std::chrono_literals;

TEST(FakeClockTest, SleeperWakesOnlyWhenTimeIsStepped) {
  FakeClock clock;
  std::atomic<bool> woke{false};
  std::jthread sleeper([&](std::stop_token st) {
    EXPECT_TRUE(clock.SleepFor(5s, st));
    woke = true;
  });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(4s);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(woke.load());
  clock.Step(1s);
  sleeper.join();
  EXPECT_TRUE(woke.load());
}

TEST(FakeClockTest, StopWakesSleeperWithFalse) {
  FakeClock clock;
  std::stop_source stop;
  bool result = true;
  std::thread sleeper([&] { result = clock.SleepFor(1h, stop.get_token()); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  stop.request_stop();
  sleeper.join();
  EXPECT_FALSE(result);
}

TEST(FakeClockTest, WallClockAdvancesWithSteps) {
  FakeClock clock;
  auto w0 = clock.WallNow();
  clock.Step(90s);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow() - w0), 90s);
}

TEST(RealClockTest, StopInterruptsSleep) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(RealClock::Get().SleepFor(1h, stop.get_token()));
}

}  // namespace
}  // namespace kcm
