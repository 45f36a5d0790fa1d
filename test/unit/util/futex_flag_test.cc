#include "pkg/util/futex_flag.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace kcm {
namespace {

TEST(FutexFlagTest, StartsClearAndWaitReturnsAtOnceWhenSet) {
  FutexFlag flag;
  EXPECT_FALSE(flag.IsSet());
  flag.Set();
  EXPECT_TRUE(flag.IsSet());
  flag.Wait();  // does not block
  EXPECT_TRUE(flag.IsSet());
}

TEST(FutexFlagTest, WaitBlocksUntilAnotherThreadSetsIt) {
  FutexFlag flag;
  int value = 0;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    value = 42;  // published by Set()
    flag.Set();
  });
  const auto start = std::chrono::steady_clock::now();
  flag.Wait();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(40));
  EXPECT_EQ(value, 42);
  setter.join();
}

TEST(FutexFlagTest, ManyHandOffsNeverLoseAWake) {
  constexpr int kRounds = 2000;
  std::vector<FutexFlag> flags(kRounds);
  std::vector<int> values(kRounds, 0);
  std::thread setter([&] {
    for (int i = 0; i < kRounds; ++i) {
      values[i] = i + 1;
      flags[i].Set();
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    flags[i].Wait();
    ASSERT_EQ(values[i], i + 1);
  }
  setter.join();
}

}  // namespace
}  // namespace kcm
