#include "pkg/cache/reflector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "pkg/cache/delta_fifo.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::FakeListerWatcher;
using ::kcm::mocks::FakeObject;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::RecordingStore;
using ::kcm::mocks::WaitUntil;
using ::testing::ElementsAre;

class ReflectorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Reflector> Make(ReflectorOptions options = {}) {
    options.clock = &clock_;
    options.rand = [] { return 0.5; };
    options.expected_kind = "Fake";
    return std::make_unique<Reflector>(lw_, store_, std::move(options));
  }

  FakeClock clock_;
  std::shared_ptr<FakeListerWatcher> lw_ = std::make_shared<FakeListerWatcher>();
  std::shared_ptr<RecordingStore> store_ = std::make_shared<RecordingStore>();
};

// 2.1
TEST(ExponentialBackoffTest, DoublesFromInitialToCapWithJitterAndResetsAfterQuietPeriod) {
  FakeClock clock;
  double r = 0.0;
  ExponentialBackoff backoff({}, clock, [&] { return r; });
  std::vector<Clock::duration> seen;
  for (int i = 0; i < 8; ++i) seen.push_back(backoff.Next());
  EXPECT_THAT(seen, ElementsAre(800ms, 1600ms, 3200ms, 6400ms, 12800ms, 25600ms, 30s, 30s));
  // Jitter 1.0: the delay is base × (1 + rand).
  r = 0.5;
  EXPECT_EQ(backoff.Next(), 45s);
  r = 0.0;
  clock.Step(2min);
  EXPECT_EQ(backoff.Next(), 30s) << "exactly 2 min is not yet a reset";
  clock.Step(2min + 1ms);
  EXPECT_EQ(backoff.Next(), 800ms);
}

// 2.1
TEST_F(ReflectorTest, RunBacksOffOnTheClockBetweenFailedListAndWatches) {
  lw_->ScriptList(Error{500, "InternalError", "etcd down", {}});
  lw_->ScriptList(Error{500, "InternalError", "etcd down", {}});
  auto reflector = Make({.backoff = {.jitter = 0.0}});
  std::jthread runner([&](std::stop_token st) { reflector->Run(st); });
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  EXPECT_EQ(lw_->num_lists(), 1u);
  clock_.Step(799ms);
  std::this_thread::sleep_for(20ms);  // only a chance to misbehave; the clock has not reached it
  EXPECT_EQ(lw_->num_lists(), 1u);
  clock_.Step(1ms);
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_lists() == 2; }));
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(1600ms);
  // Third attempt succeeds (empty list) and opens a watch.
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 1; }));
  runner.request_stop();
  runner.join();
  EXPECT_TRUE(lw_->WaitForOpenedWatch(0)->stopped()) << "stop must end the active watch";
}

// 2.2
TEST_F(ReflectorTest, FirstListAtRVZeroPaginatedThenUnpaginatedAtLastRV) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({MakeObj("ns", "a", "10")}, "10");
  auto w = lw_->ScriptWatch();
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "b", "11"));
  w->PushError(Error{410, "Expired", "too old resource version", {}});
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_TRUE(reflector->ListAndWatch(stop.get_token()).ok());   // 410 on watch → relist
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());  // no more watches scripted
  auto lists = lw_->list_calls();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].resource_version, "0");
  EXPECT_EQ(lists[0].limit, 500);
  // From the watch cache: exact RV, no limit.
  EXPECT_EQ(lists[1].resource_version, "11");
  EXPECT_EQ(lists[1].limit, 0);
}

// A relist swaps each unchanged item (same write) for the object the store already holds, so the
// cache is not held twice while the relist is applied; changed items stay as listed.
TEST_F(ReflectorTest, RelistReusesTheStoresObjectsForUnchangedItems) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  api::ObjectPtr held = MakeObj("ns", "a", "10", "held");
  ASSERT_TRUE(known->Add(held).ok());
  ASSERT_TRUE(known->Add(MakeObj("ns", "b", "10", "old-b")).ok());
  auto fifo = std::make_shared<DeltaFIFO>(DeltaFIFOOptions{.known_objects = known});
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({MakeObj("ns", "a", "10", "relisted"), MakeObj("ns", "b", "11", "changed")},
                  "11");
  ReflectorOptions options;
  options.clock = &clock_;
  options.rand = [] { return 0.5; };
  Reflector reflector(lw_, fifo, options);
  std::stop_source stop;
  (void)reflector.ListAndWatch(stop.get_token());  // the watch is refused after the list
  const Deltas a = fifo->GetByKey("ns/a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, DeltaType::kReplaced);
  EXPECT_EQ(a[0].object, held);
  const Deltas b = fifo->GetByKey("ns/b");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(mocks::Payload(b[0].object), "changed");
}

// 2.2
TEST_F(ReflectorTest, PaginatedRVZeroListKeepsLaterListsPaginated) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({MakeObj("ns", "a", "10")}, "10", "page2");
  lw_->ScriptList({MakeObj("ns", "b", "10")}, "10");
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  auto lists = lw_->list_calls();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[1].continue_token, "page2");
  EXPECT_EQ(lists[1].resource_version, "") << "a continue page carries no resourceVersion";
  EXPECT_EQ(lists[1].limit, 500);
  EXPECT_EQ(lists[2].resource_version, "10");
  EXPECT_EQ(lists[2].limit, 500);
  EXPECT_EQ(store_->ops()[0], "Replace@10: a b");
}

// 2.2 (pager, 1.9)
TEST_F(ReflectorTest, ExpiredContinuePageFallsBackToOneFullListAtOriginalRV) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({MakeObj("ns", "a", "10")}, "10", "page2");
  lw_->ScriptList(Error{410, "Expired", "continue expired", {}});
  lw_->ScriptList({MakeObj("ns", "a", "12"), MakeObj("ns", "b", "12")}, "12");
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  auto lists = lw_->list_calls();
  ASSERT_EQ(lists.size(), 3u);
  EXPECT_EQ(lists[2].resource_version, "0");
  EXPECT_EQ(lists[2].limit, 0);
  EXPECT_EQ(lists[2].continue_token, "");
  EXPECT_EQ(store_->ops()[0], "Replace@12: a b");
  EXPECT_EQ(reflector->LastSyncResourceVersion(), "12");
}

// 2.3
TEST_F(ReflectorTest, ExpiredOrTooLargeListRelistsAtOnceWithEmptyRV) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList(Error{410, "Gone", "gone", {}});
  lw_->ScriptList({MakeObj("ns", "a", "20")}, "20");
  lw_->ScriptList(Error{
      504, "Timeout", "Too large resource version: 30, current: 20", {"ResourceVersionTooLarge"}});
  lw_->ScriptList({MakeObj("ns", "b", "31")}, "31");
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  auto lists = lw_->list_calls();
  ASSERT_EQ(lists.size(), 5u);
  EXPECT_EQ(lists[0].resource_version, "0");
  EXPECT_EQ(lists[1].resource_version, "");
  // The successful list cleared the mark: the next list asks for the RV it got.
  EXPECT_EQ(lists[2].resource_version, "20");
  EXPECT_EQ(lists[3].resource_version, "");
  EXPECT_EQ(lists[4].resource_version, "31");
  EXPECT_THAT(store_->ops(), ElementsAre("Replace@20: a", "Replace@31: b", "Replace@1:"));

  EXPECT_TRUE(
      errors::IsTooLargeResourceVersion(Error{504, "Timeout", "x", {"ResourceVersionTooLarge"}}));
  // The message of pre-1.18.6 servers is not read.
  EXPECT_FALSE(errors::IsTooLargeResourceVersion(
      Error{504, "Timeout", "Timeout: Too large resource version: 12, current: 10", {}}));
  EXPECT_TRUE(IsExpiredOrGone(Error{410, "Expired", "", {}}));
  EXPECT_TRUE(IsExpiredOrGone(Error{410, "Gone", "", {}}));
}

// 2.4
TEST_F(ReflectorTest, WatchParamsAndCleanCloseRewatchesFromLastRVWithoutRelist) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({}, "10");
  auto w = lw_->ScriptWatch();
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "a", "11"));
  w->Close();
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  auto watches = lw_->watch_calls();
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_EQ(watches[0].resource_version, "10");
  EXPECT_TRUE(watches[0].allow_watch_bookmarks);
  EXPECT_EQ(watches[0].timeout_seconds, 450);  // 300 × (1 + 0.5)
  EXPECT_FALSE(watches[0].send_initial_events);
  EXPECT_EQ(watches[1].resource_version, "11");
  EXPECT_EQ(lw_->num_lists(), 1u);
}

// 2.4
TEST_F(ReflectorTest, ShortWatchWithoutEventsIsAnErrorButALongOneIsNot) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptWatch()->Close();
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_TRUE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_EQ(lw_->num_watches(), 1u) << "a sub-second empty watch ends ListAndWatch (relist)";

  auto quiet = lw_->ScriptWatch();
  std::jthread runner([&] { EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok()); });
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 2; }));
  clock_.Step(1s);
  quiet->Close();
  runner.join();
  EXPECT_EQ(lw_->num_watches(), 3u) << "an empty watch of 1 s is a clean close: re-watch";
  EXPECT_EQ(lw_->num_lists(), 2u);
}

// 2.4
TEST_F(ReflectorTest, ConnectionRefusedOr429OnWatchBacksOffAndRewatchesWithoutRelist) {
  lw_->ScriptWatchError(Error::Transport(TransportCause::kConnectionRefused, "connect: refused"));
  lw_->ScriptWatchError(Error{429, "TooManyRequests", "slow down", {}});
  auto reflector = Make({.backoff = {.jitter = 0.0}});
  std::jthread runner([&](std::stop_token st) { EXPECT_TRUE(reflector->ListAndWatch(st).ok()); });
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(800ms);
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 2; }));
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(1600ms);
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 3; }));
  EXPECT_EQ(lw_->num_lists(), 1u);
  runner.request_stop();
  runner.join();
  EXPECT_TRUE(lw_->WaitForOpenedWatch(0)->stopped());
}

// 2.4: pkg/client sends a WATCH request when its stream is first read, so a refused connection
// surfaces from Next(), not from Watch(). It must still mean "back off and re-watch", not relist.
TEST_F(ReflectorTest, ConnectionRefusedOnTheFirstReadOfAWatchRewatchesWithoutRelist) {
  class RefusedStream final : public WatchInterface {
   public:
    Result<std::optional<api::WatchEvent>> Next() override {
      return Error::Transport(TransportCause::kConnectionRefused, "Couldn't connect to server");
    }
    void Stop() override {}
  };
  class LazyListerWatcher final : public ListerWatcher {
   public:
    explicit LazyListerWatcher(std::shared_ptr<FakeListerWatcher> inner) : inner_(inner) {}
    Result<api::ObjectList> List(const api::ListOptions& o) override { return inner_->List(o); }
    Result<std::unique_ptr<WatchInterface>> Watch(const api::ListOptions& o) override {
      if (refused_++ == 0)
        return std::unique_ptr<WatchInterface>(std::make_unique<RefusedStream>());
      return inner_->Watch(o);
    }

   private:
    std::shared_ptr<FakeListerWatcher> inner_;
    int refused_ = 0;
  };
  ReflectorOptions options{.backoff = {.jitter = 0.0}};
  options.clock = &clock_;
  options.rand = [] { return 0.5; };
  Reflector reflector(std::make_shared<LazyListerWatcher>(lw_), store_, options);
  std::jthread runner([&](std::stop_token st) { EXPECT_TRUE(reflector.ListAndWatch(st).ok()); });
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(800ms);
  lw_->WaitForOpenedWatch(0);
  EXPECT_EQ(lw_->num_lists(), 1u);
  runner.request_stop();
  runner.join();
}

// 2.5
TEST_F(ReflectorTest, EventsGoToStoreBookmarksOnlyAdvanceRVAndWrongKindIsSkipped) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({}, "10");
  auto w = lw_->ScriptWatch();
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "a", "11"));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "12"));
  w->Push(api::WatchEventType::kDeleted, MakeObj("ns", "a", "13"));
  w->PushBookmark("14");
  api::ObjectMeta meta;
  meta.name = "alien";
  meta.resource_version = "15";
  w->Push(api::WatchEventType::kAdded, std::make_shared<FakeObject>(meta, "", "Other"));
  w->Push(api::WatchEventType::kAdded, nullptr);
  w->Close();
  auto reflector = Make();
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  // The bookmark reaches the store too (client-go Store.Bookmark), which is how an informer's
  // LastStoreSyncResourceVersion moves without object changes.
  EXPECT_THAT(store_->ops(),
              ElementsAre("Replace@10:", "Add a@11", "Update a@12", "Delete a@13", "Bookmark@14"));
  EXPECT_EQ(reflector->LastSyncResourceVersion(), "14");
  EXPECT_EQ(lw_->watch_calls()[1].resource_version, "14");
}

// The events of one read (FakeWatch: those pushed before the reflector reads them) reach the
// store in one hand-over, in order; a bookmark hands over what came before it first; an event
// that arrives on its own is handed over on its own; the last resourceVersion is the last event's.
// client-go's watchHandler applies the same events one by one, in the same order, and records each
// one's resourceVersion after the store took it; only the number of hand-overs differs.
TEST_F(ReflectorTest, EventsOfOneReadAreHandedOverTogether) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptList({}, "10");
  auto w = lw_->ScriptWatch();
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "a", "11"));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "12"));
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "b", "13"));
  w->PushBookmark("14");
  w->Push(api::WatchEventType::kDeleted, MakeObj("ns", "b", "15"));
  auto reflector = Make();
  std::stop_source stop;
  std::jthread run([&] { (void)reflector->ListAndWatch(stop.get_token()); });
  ASSERT_TRUE(WaitUntil([&] { return store_->ops().size() == 6; }));
  EXPECT_EQ(reflector->LastSyncResourceVersion(), "15");
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "16"));
  ASSERT_TRUE(WaitUntil([&] { return store_->ops().size() == 7; }));
  EXPECT_EQ(reflector->LastSyncResourceVersion(), "16");
  stop.request_stop();
  run.join();
  EXPECT_THAT(store_->ops(), ElementsAre("Replace@10:", "Add a@11", "Update a@12", "Add b@13",
                                         "Bookmark@14", "Delete b@15", "Update a@16"));
  EXPECT_THAT(store_->batches(), ElementsAre(3u, 1u, 1u));
}

// 2.6
TEST_F(ReflectorTest, ResyncTimerCallsStoreResyncOnlyWhenShouldResync) {
  std::atomic<bool> want{true};
  std::atomic<int> asked{0};
  auto reflector = Make({.resync_period = 10s, .should_resync = [&] {
                           ++asked;
                           return want.load();
                         }});
  std::jthread runner([&](std::stop_token st) { EXPECT_TRUE(reflector->ListAndWatch(st).ok()); });
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 1; }));
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(10s);
  ASSERT_TRUE(WaitUntil([&] { return store_->resyncs() == 1; }));
  want = false;
  ASSERT_TRUE(WaitUntil([&] { return clock_.Waiters() == 1; }));
  clock_.Step(10s);
  ASSERT_TRUE(WaitUntil([&] { return asked.load() == 2; }));
  EXPECT_EQ(store_->resyncs(), 1);
  runner.request_stop();
}

// 2.7
TEST_F(ReflectorTest, StreamingListReplacesAtEndBookmarkAndKeepsTheStream) {
  lw_->open_watches_when_unscripted = false;
  auto w = lw_->ScriptWatch();
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "a", "5"));
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "b", "6"));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "7"));
  w->PushBookmark("8", /*initial_events_end=*/true);
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "b", "9"));
  w->Close();
  auto reflector = Make({.use_watch_list = true});
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_EQ(lw_->num_lists(), 0u);
  auto watches = lw_->watch_calls();
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_TRUE(watches[0].send_initial_events);
  EXPECT_EQ(watches[0].resource_version_match, "NotOlderThan");
  EXPECT_TRUE(watches[0].allow_watch_bookmarks);
  EXPECT_EQ(watches[0].resource_version, "");
  auto ops = store_->ops();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_TRUE(ops[0] == "Replace@8: a b" || ops[0] == "Replace@8: b a") << ops[0];
  EXPECT_EQ(ops[1], "Update b@9");
  EXPECT_EQ(watches[1].resource_version, "9");
}

// 2.7
TEST_F(ReflectorTest, StreamingListFallsBackToListWhenRefused) {
  lw_->open_watches_when_unscripted = false;
  lw_->ScriptWatchError(Error{422, "Invalid", "sendInitialEvents is forbidden", {}});
  lw_->ScriptList({MakeObj("ns", "a", "3")}, "3");
  auto reflector = Make({.use_watch_list = true});
  std::stop_source stop;
  EXPECT_FALSE(reflector->ListAndWatch(stop.get_token()).ok());
  EXPECT_EQ(lw_->num_lists(), 1u);
  EXPECT_EQ(store_->ops()[0], "Replace@3: a");
}

// 2.7
TEST_F(ReflectorTest, StreamingListWithoutEndBookmarkTimesOutToList) {
  auto silent = lw_->ScriptWatch();
  silent->Push(api::WatchEventType::kAdded, MakeObj("ns", "a", "5"));
  auto reflector = Make({.use_watch_list = true, .watch_list_timeout = 30s});
  std::jthread runner([&](std::stop_token st) { EXPECT_TRUE(reflector->ListAndWatch(st).ok()); });
  ASSERT_TRUE(clock_.WaitForWaiters(1));
  clock_.Step(30s);
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_lists() == 1; }));
  EXPECT_TRUE(silent->stopped());
  ASSERT_TRUE(WaitUntil([&] { return lw_->num_watches() == 2; }));
  EXPECT_EQ(store_->ops()[0], "Replace@1:")
      << "nothing from the abandoned stream reaches the store";
  runner.request_stop();
}

}  // namespace
}  // namespace kcm::cache
