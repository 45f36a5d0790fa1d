// WaitForCacheSync (pkg/cache/wait.h): polling until synced or stopped, on fakes and on a real
// informer with a handler registration.
#include "pkg/cache/wait.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <stdexcept>
#include <thread>

#include "pkg/cache/lister.h"
#include "pkg/cache/shared_informer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/cache/shared_informer_fixture.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::WaitUntil;

TEST(WaitForCacheSyncTest, PollsEvery100msUntilSyncedOrStopped) {
  FakeClock clock;
  std::atomic<bool> synced{false};
  std::atomic<int> polls{0};
  std::vector<std::function<bool()>> fns = {[] { return true; },
                                            [&] {
                                              ++polls;
                                              return synced.load();
                                            }};
  std::stop_source never;
  bool result = false;
  std::jthread waiter([&] { result = WaitForCacheSync(never.get_token(), fns, clock); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_EQ(polls.load(), 1) << "checked immediately, then sleeps";
  synced = true;
  clock.Step(100ms);
  waiter.join();
  EXPECT_TRUE(result);
  EXPECT_EQ(polls.load(), 2);

  std::stop_source stop;
  std::jthread stopped(
      [&] { EXPECT_FALSE(WaitForCacheSync(stop.get_token(), {[] { return false; }}, clock)); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  stop.request_stop();
  stopped.join();
}

// 4.7: "false if stopped first" — first, that is, before the caches synced. Synced caches are
// true even when the stop was already requested (upstream polls immediately).
TEST(WaitForCacheSyncTest, SyncedBeforeTheStopIsTrue) {
  FakeClock clock;
  std::stop_source stop;
  stop.request_stop();
  EXPECT_TRUE(WaitForCacheSync(stop.get_token(), {[] { return true; }}, clock));
  EXPECT_FALSE(
      WaitForCacheSync(stop.get_token(), {[] { return true; }, [] { return false; }}, clock));
}

// 4.7
TEST_F(SharedInformerTest, WaitForCacheSyncOnARealInformerAndRegistration) {
  MakeInformer();
  auto registration = informer_->AddEventHandler(std::make_shared<RecordingHandler>());
  ASSERT_TRUE(registration.ok());
  lw_->ScriptList({MakeObj("ns", "a", "1")}, "1");
  std::stop_source stop;
  std::atomic<bool> done{false};
  bool result = false;
  std::jthread waiter([&] {
    result = WaitForCacheSync(
        stop.get_token(),
        {[&] { return informer_->HasSynced(); }, [&] { return (*registration)->HasSynced(); }},
        clock_);
    done = true;
  });
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  EXPECT_FALSE(done.load());
  Start();
  // Only the waiter sleeps on the clock here (no resync, no backoff): step it until it sees sync.
  ASSERT_TRUE(WaitUntil([&] {
    if (done) return true;
    if (clock_.Waiters() == 1) clock_.Step(100ms);
    return false;
  }));
  waiter.join();
  EXPECT_TRUE(result);
}

}  // namespace
}  // namespace kcm::cache
