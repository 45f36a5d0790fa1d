#include "pkg/util/futex_condition.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kcm {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(FutexConditionTest, WaitReturnsOnceTheStateChangedUnderTheMutex) {
  std::mutex mu;
  FutexCondition ready;
  int value = 0;  // guarded by mu
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(50));
    {
      std::lock_guard lock(mu);
      value = 42;
    }
    ready.NotifyOne();
  });
  std::unique_lock lock(mu);
  ready.Wait(lock, [&] { return value != 0; });
  EXPECT_EQ(value, 42);
  EXPECT_TRUE(lock.owns_lock());
  lock.unlock();
  setter.join();
}

TEST(FutexConditionTest, WaitUntilReturnsFalseAtTheDeadlineWithNoNotify) {
  std::mutex mu;
  FutexCondition ready;
  std::unique_lock lock(mu);
  const auto start = steady_clock::now();
  bool woken = true;
  while (woken) woken = ready.WaitUntil(lock, start + milliseconds(60));  // spurious wakes loop
  EXPECT_GE(steady_clock::now() - start, milliseconds(60));
  EXPECT_TRUE(lock.owns_lock());
  // A deadline already passed does not sleep.
  EXPECT_FALSE(ready.WaitUntil(lock, steady_clock::now() - milliseconds(1)));
}

TEST(FutexConditionTest, WaitUntilReturnsTrueWhenNotifiedBeforeTheDeadline) {
  std::mutex mu;
  FutexCondition ready;
  bool set = false;  // guarded by mu
  std::thread setter([&] {
    std::this_thread::sleep_for(milliseconds(20));
    {
      std::lock_guard lock(mu);
      set = true;
    }
    ready.NotifyOne();
  });
  std::unique_lock lock(mu);
  const auto deadline = steady_clock::now() + std::chrono::seconds(30);
  while (!set) ASSERT_TRUE(ready.WaitUntil(lock, deadline));
  lock.unlock();
  setter.join();
}

TEST(FutexConditionTest, NotifyAllWakesEveryWaiter) {
  constexpr int kWaiters = 8;
  std::mutex mu;
  FutexCondition ready;
  bool open = false;  // guarded by mu
  int waiting = 0;    // guarded by mu
  int through = 0;    // guarded by mu
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      std::unique_lock lock(mu);
      ++waiting;
      ready.Wait(lock, [&] { return open; });
      ++through;
    });
  }
  {
    // Every waiter is in, or on its way into, its sleep before the gate opens.
    std::unique_lock lock(mu);
    while (waiting < kWaiters) {
      lock.unlock();
      std::this_thread::sleep_for(milliseconds(1));
      lock.lock();
    }
    open = true;
  }
  ready.NotifyAll();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(through, kWaiters);
}

// A producer and consumers handing many items over one at a time, NotifyOne each: a lost wake-up
// would leave an item queued and a consumer asleep, and the joins below would never return.
TEST(FutexConditionTest, ManyHandOffsToSeveralConsumersLoseNoWake) {
  constexpr int kItems = 20000;
  constexpr int kConsumers = 3;
  std::mutex mu;
  FutexCondition ready;
  std::deque<int> queue;  // guarded by mu
  bool done = false;      // guarded by mu
  long long sum = 0;      // guarded by mu
  int taken = 0;          // guarded by mu
  std::vector<std::thread> consumers;
  for (int i = 0; i < kConsumers; ++i) {
    consumers.emplace_back([&] {
      std::unique_lock lock(mu);
      for (;;) {
        ready.Wait(lock, [&] { return !queue.empty() || done; });
        if (queue.empty()) return;
        sum += queue.front();
        queue.pop_front();
        ++taken;
      }
    });
  }
  for (int i = 1; i <= kItems; ++i) {
    {
      std::lock_guard lock(mu);
      queue.push_back(i);
    }
    ready.NotifyOne();
  }
  {
    std::lock_guard lock(mu);
    done = true;
  }
  ready.NotifyAll();
  for (std::thread& t : consumers) t.join();
  EXPECT_EQ(taken, kItems);
  EXPECT_EQ(sum, static_cast<long long>(kItems) * (kItems + 1) / 2);
}

}  // namespace
}  // namespace kcm
