#include "pkg/controller/namespace_fence.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace kcm::controller {
namespace {

using namespace std::chrono_literals;

api::ShardRange Only(std::string_view ns) {
  const uint64_t h = api::ShardHash(ns);
  return {h, h};
}

const api::ShardRange kEverything{0, UINT64_MAX};

TEST(NamespaceFenceTest, StartsClosedAndAdmitsOnlyOpenRanges) {
  NamespaceFence fence;
  EXPECT_FALSE(fence.Admit("a").has_value());
  fence.Open({Only("a")});
  EXPECT_TRUE(fence.Admit("a").has_value());
  EXPECT_FALSE(fence.Admit("b").has_value());
  EXPECT_TRUE(fence.IsOpen("a"));
  EXPECT_FALSE(fence.IsOpen("b"));
}

// Closing a range inside an open one leaves the rest open; opening it again joins them.
TEST(NamespaceFenceTest, CloseCutsRangesOutAndOpenJoinsThem) {
  NamespaceFence fence;
  fence.Open({kEverything});
  ASSERT_TRUE(fence.Close({Only("b")}, 0s));
  EXPECT_TRUE(fence.IsOpen("a"));
  EXPECT_FALSE(fence.IsOpen("b"));
  EXPECT_TRUE(fence.IsOpen("c"));
  fence.Open({Only("b")});
  EXPECT_TRUE(fence.IsOpen("b"));
  // Adjacent ranges opened one by one make one range: closing the whole space closes them all.
  fence.Open({{0, 9}, {10, 19}, {20, UINT64_MAX}});
  ASSERT_TRUE(fence.Close({kEverything}, 0s));
  EXPECT_FALSE(fence.IsOpen("a"));
  EXPECT_FALSE(fence.IsOpen("b"));
  EXPECT_FALSE(fence.IsOpen("c"));
  // Closing the top of the space after opening it: no overflow at its end.
  fence.Open({{UINT64_MAX - 1, UINT64_MAX}});
  ASSERT_TRUE(fence.Close({{UINT64_MAX, UINT64_MAX}}, 0s));
  fence.Open({{0, 0}});
  ASSERT_TRUE(fence.Close({{0, 0}}, 0s));
}

// Close returns only once the admitted writes to its ranges are answered; writes to other
// namespaces neither wait nor hold it up.
TEST(NamespaceFenceTest, CloseWaitsForTheAdmittedWritesOfItsRanges) {
  NamespaceFence fence;
  fence.Open({kEverything});
  auto to_a = std::make_unique<NamespaceFence::Admission>(*fence.Admit("a"));
  auto to_b = fence.Admit("b");  // another namespace: does not hold Close up
  std::atomic<bool> closed{false};
  auto close = std::async(std::launch::async, [&] {
    const bool settled = fence.Close({Only("a")}, 60s);
    closed = true;
    return settled;
  });
  while (fence.IsOpen("a")) std::this_thread::yield();
  EXPECT_FALSE(fence.Admit("a").has_value()) << "closing: no new write";
  EXPECT_TRUE(fence.Admit("b").has_value());
  EXPECT_TRUE(to_a->token().stop_requested()) << "its write is cancelled";
  EXPECT_FALSE(to_b->token().stop_requested()) << "not the other namespace's";
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(closed) << "a write to a is still in flight";
  to_a.reset();  // its answer is in
  EXPECT_TRUE(close.get());
}

TEST(NamespaceFenceTest, CloseGivesUpAfterItsGrace) {
  NamespaceFence fence;
  fence.Open({kEverything});
  auto held = fence.Admit("a");
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(fence.Close({Only("a")}, 20ms));
  EXPECT_FALSE(fence.IsOpen("a"));
}

}  // namespace
}  // namespace kcm::controller
