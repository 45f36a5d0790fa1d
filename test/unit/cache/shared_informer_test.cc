#include "pkg/cache/shared_informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <stdexcept>
#include <thread>

#include "pkg/cache/lister.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/cache/wait.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/cache/shared_informer_fixture.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::Payload;
using ::kcm::mocks::WaitUntil;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// 4.1
TEST_F(SharedInformerTest, HandleDeltasUpdatesIndexerBeforeNotifying) {
  MakeInformer();
  auto handler = std::make_shared<RecordingHandler>(informer_->GetIndexer());
  ASSERT_TRUE(informer_->AddEventHandler(handler).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1")}, "1");
  auto w = lw_->ScriptWatch();
  lw_->ScriptList({MakeObj("ns", "a", "4")}, "4");  // the relist after the watch expires
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  // One event at a time, so that at each handler call the cache holds exactly that event's state.
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 2; }));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "2"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 3; }));
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "c", "2"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 4; }));
  w->Push(api::WatchEventType::kDeleted, MakeObj("ns", "b", "3"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 5; }));
  // The reflector records an event's resourceVersion after the store took the event (client-go's
  // watchHandler: store.Delete, then setLastSyncResourceVersion), so the handler can run first.
  EXPECT_TRUE(WaitUntil([&] { return informer_->LastSyncResourceVersion() == "3"; }))
      << informer_->LastSyncResourceVersion();

  // 410 → relist; "c" vanished while disconnected → OnDelete gets a tombstone.
  w->PushError(Error{410, "Expired", "too old", {}});
  ASSERT_TRUE(clock_.WaitForWaiters(1));  // Run's backoff before relisting
  clock_.Step(2s);
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 7; }));
  EXPECT_THAT(handler->events(),
              ElementsAre("add a@1 initial", "add b@1 initial", "update a@1->2", "add c@2",
                          "delete b", "update a@2->4", "delete tombstone ns/c"));
  EXPECT_THAT(informer_->GetStore()->ListKeys(), ElementsAre("ns/a"));
}

// client-go's store takes an event's resourceVersion before the handlers hear of the event
// (threadSafeMap.Update, then OnAdd/OnUpdate): a handler that compares
// LastStoreSyncResourceVersion with its event's object finds the event applied. And each move of
// the watermark reaches AddStoreSyncListener's listeners, with the watermark already moved.
TEST_F(SharedInformerTest, HandlersSeeTheirEventAppliedAndStoreSyncListenersHearEveryMove) {
  MakeInformer();
  std::mutex mu;
  std::vector<std::string> at_handler;
  std::vector<std::string> at_listener;
  auto handler = std::make_shared<RecordingHandler>();
  handler->hook = [&](const std::string& event) {
    std::lock_guard lock(mu);
    at_handler.push_back(event + " seen at " + informer_->LastStoreSyncResourceVersion());
  };
  const uint64_t id = informer_->AddStoreSyncListener([&] {
    std::lock_guard lock(mu);
    at_listener.push_back(informer_->LastStoreSyncResourceVersion());
  });
  ASSERT_TRUE(informer_->AddEventHandler(handler).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1")}, "1");
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 1; }));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "2"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 2; }));
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "b", "3"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 3; }));
  w->PushBookmark("5");
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return at_listener.size() == 4;
  }));
  informer_->RemoveStoreSyncListener(id);
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "c", "6"));
  ASSERT_TRUE(WaitUntil([&] { return handler->size() == 4; }));
  std::lock_guard lock(mu);
  EXPECT_THAT(at_handler, ElementsAre("add a@1 initial seen at 1", "update a@1->2 seen at 2",
                                      "add b@3 seen at 3", "add c@6 seen at 6"));
  EXPECT_THAT(at_listener, ElementsAre("1", "2", "3", "5"));  // removed before c@6
}

// A non-blocking handler is called on the informer's own thread, right after its event is applied
// and counted by the watermark: it reads LastStoreSyncResourceVersion (the DeltaFIFO's lock) and
// HasSynced inline without deadlocking, and sees at least its event's resourceVersion. An ordinary
// handler next to it still gets its own thread and the same notifications in the same order.
TEST_F(SharedInformerTest, NonBlockingHandlerRunsOnTheInformerThreadAndSeesItsEventApplied) {
  MakeInformer();
  std::mutex mu;
  std::vector<std::string> at_handler;
  std::set<std::thread::id> threads;
  auto inline_handler = std::make_shared<RecordingHandler>(informer_->GetIndexer());
  inline_handler->non_blocking = true;
  inline_handler->hook = [&](const std::string& event) {
    const std::string rv = informer_->LastStoreSyncResourceVersion();
    const bool synced = informer_->HasSynced();
    std::lock_guard lock(mu);
    threads.insert(std::this_thread::get_id());
    at_handler.push_back(event + " seen at " + rv + (synced ? " synced" : ""));
  };
  auto ordinary = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer_->AddEventHandler(inline_handler).ok());
  ASSERT_TRUE(informer_->AddEventHandler(ordinary).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1")}, "2");
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "3"));
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "c", "4"));
  w->Push(api::WatchEventType::kDeleted, MakeObj("ns", "b", "5"));
  ASSERT_TRUE(WaitUntil([&] { return inline_handler->size() == 5 && ordinary->size() == 5; }));
  EXPECT_EQ(inline_handler->events(), ordinary->events());
  std::lock_guard lock(mu);
  // The list's RV counts once all of it is applied; HasSynced only after the last initial Add
  // was handed out.
  EXPECT_THAT(at_handler, ElementsAre("add a@1 initial seen at ", "add b@1 initial seen at 2",
                                      "update a@1->3 seen at 3 synced", "add c@4 seen at 4 synced",
                                      "delete b seen at 5 synced"));
  EXPECT_THAT(threads, ElementsAre(runner_.get_id()));
}

// Once the informer says it has synced, a non-blocking handler has already handled every initial
// item, so its registration is synced at the same moment (an ordinary handler's may lag behind).
TEST_F(SharedInformerTest, NonBlockingHandlerHasHandledTheInitialListWhenTheInformerSyncs) {
  MakeInformer();
  auto handler = std::make_shared<RecordingHandler>();
  handler->non_blocking = true;
  auto registration = informer_->AddEventHandler(handler);
  ASSERT_TRUE(registration.ok());
  std::vector<api::ObjectPtr> items;
  for (int i = 0; i < 200; ++i) items.push_back(MakeObj("ns", "o" + std::to_string(i), "1"));
  lw_->ScriptList(std::move(items), "1");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_EQ(handler->size(), 200u);
  EXPECT_TRUE((*registration)->HasSynced());
}

// A non-blocking handler added after start gets the cache replay on the caller's thread before
// AddEventHandler returns (it may call HasSynced meanwhile), then the live events in order
// without a gap or a duplicate; once RemoveEventHandler returns it is called no more.
TEST_F(SharedInformerTest, LateNonBlockingHandlerReplaysBeforeReturningAndStopsOnRemoval) {
  ASSERT_NO_FATAL_FAILURE(StartSyncedWithAnEarlyHandler());
  auto& early = early_;
  auto& w = watch_;

  // Events flow while the late handler registers: each object is seen exactly once, first as its
  // replayed or live Add.
  std::jthread pusher([&] {
    for (int i = 0; i < 300; ++i) {
      w->Push(api::WatchEventType::kAdded, MakeObj("ns", "o" + std::to_string(i), "2"));
    }
  });
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> replay_calls{0};
  std::atomic<int> synced_reads{0};
  auto late = std::make_shared<RecordingHandler>();
  late->non_blocking = true;
  late->hook = [&](const std::string&) {
    if (std::this_thread::get_id() != caller) return;  // a live event, on the informer's thread
    ++replay_calls;
    if (informer_->HasSynced()) ++synced_reads;
  };
  auto registration = informer_->AddEventHandler(late);
  ASSERT_TRUE(registration.ok());
  EXPECT_TRUE((*registration)->HasSynced()) << "replay handled before AddEventHandler returned";
  EXPECT_GE(replay_calls.load(), 2);
  EXPECT_EQ(synced_reads.load(), replay_calls.load());
  pusher.join();
  ASSERT_TRUE(WaitUntil([&] { return early->size() == 302; }));
  ASSERT_TRUE(WaitUntil([&] { return late->size() == 302; }));
  std::set<std::string> distinct;
  for (const std::string& e : late->events()) {
    distinct.insert(e.substr(0, e.find('@')));  // "add o17", whether replayed or live
  }
  EXPECT_EQ(distinct.size(), 302u) << "no object twice, none missing";

  ASSERT_TRUE(informer_->RemoveEventHandler(*registration).ok());
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "z", "3"));
  ASSERT_TRUE(WaitUntil([&] { return early->Saw("add z@3"); }));
  EXPECT_EQ(late->size(), 302u);
}

// 4.2
TEST_F(SharedInformerTest, ResyncGoesOnlyToListenersWhoseResyncIsDue) {
  MakeInformer(30s);
  auto fast = std::make_shared<RecordingHandler>();
  auto slow = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer_->AddEventHandlerWithResyncPeriod(fast, 10s).ok());
  ASSERT_TRUE(informer_->AddEventHandler(slow).ok());  // informer default: 30 s
  lw_->ScriptList({MakeObj("ns", "a", "1")}, "1");
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return fast->size() == 1 && slow->size() == 1; }));
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(WaitUntil([&] { return clock_.Waiters() == 1; }));  // the resync timer
    clock_.Step(10s);
    ASSERT_TRUE(WaitUntil([&] { return fast->Count("update a@1->1") == static_cast<size_t>(i); }));
  }
  // A live event is a barrier: anything queued for slow before it has been handled after it.
  w->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "2"));
  ASSERT_TRUE(WaitUntil([&] { return slow->Saw("update a@1->2"); }));
  EXPECT_EQ(slow->Count("update a@1->1"), 1u) << "slow is due at 30 s only";
  EXPECT_THAT(slow->events(), ElementsAre("add a@1 initial", "update a@1->1", "update a@1->2"));
}

// 4.3
TEST_F(SharedInformerTest, SlowHandlerDoesNotBlockOthersAndUnboundedBufferKeepsOrder) {
  MakeInformer();
  std::latch release(1);
  auto slow = std::make_shared<RecordingHandler>();
  slow->hook = [&](const std::string&) { release.wait(); };
  auto fast = std::make_shared<RecordingHandler>();
  ASSERT_TRUE(informer_->AddEventHandler(slow).ok());
  ASSERT_TRUE(informer_->AddEventHandler(fast).ok());
  auto w = lw_->ScriptWatch();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  constexpr int kEvents = 2000;
  for (int i = 0; i < kEvents; ++i) {
    w->Push(api::WatchEventType::kAdded, MakeObj("ns", "o" + std::to_string(i), "10"));
  }
  // Every event reaches the fast handler and the indexer while the slow one is stuck on the first.
  ASSERT_TRUE(WaitUntil([&] { return fast->size() == kEvents; }));
  EXPECT_EQ(informer_->GetStore()->List().size(), static_cast<size_t>(kEvents));
  EXPECT_EQ(slow->size(), 0u);
  release.count_down();
  ASSERT_TRUE(WaitUntil([&] { return slow->size() == kEvents; }));
  EXPECT_EQ(slow->events(), fast->events());
}

// 4.3
TEST_F(SharedInformerTest, ThrowingHandlerSkipsOnlyThatNotification) {
  MakeInformer();
  auto flaky = std::make_shared<RecordingHandler>();
  flaky->hook = [](const std::string& event) {
    if (event.starts_with("add b")) throw std::runtime_error("handler bug");
  };
  ASSERT_TRUE(informer_->AddEventHandler(flaky).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1"), MakeObj("ns", "c", "1")}, "1");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return flaky->size() == 2; }));
  EXPECT_THAT(flaky->events(), UnorderedElementsAre("add a@1 initial", "add c@1 initial"));
}

// 4.4
TEST_F(SharedInformerTest, PerHandlerResyncPeriodRules) {
  MakeInformer(30s);
  auto period = [](const Result<std::shared_ptr<ResourceEventHandlerRegistration>>& r) {
    return dynamic_cast<const ProcessorListener&>(**r).resync_period();
  };
  auto h30 = informer_->AddEventHandler(std::make_shared<RecordingHandler>());
  auto h0 = informer_->AddEventHandlerWithResyncPeriod(std::make_shared<RecordingHandler>(), 0s);
  // Below the 1 s minimum → 1 s; before start that lowers the check period to 1 s.
  auto tiny =
      informer_->AddEventHandlerWithResyncPeriod(std::make_shared<RecordingHandler>(), 200ms);
  EXPECT_EQ(period(h30), 30s);
  EXPECT_EQ(period(h0), 0s);
  EXPECT_EQ(period(tiny), 1s);

  MakeInformer(30s);
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  // After start the check period cannot shrink: the handler gets the check period instead.
  auto late = informer_->AddEventHandlerWithResyncPeriod(std::make_shared<RecordingHandler>(), 5s);
  EXPECT_EQ(period(late), 30s);
  auto later =
      informer_->AddEventHandlerWithResyncPeriod(std::make_shared<RecordingHandler>(), 60s);
  EXPECT_EQ(period(later), 60s);
}

// 4.4
TEST_F(SharedInformerTest, SmallHandlerPeriodBeforeStartDrivesTheResyncTimer) {
  MakeInformer(0s);
  auto quick = std::make_shared<RecordingHandler>();
  // With an informer resync of 0 a handler period is ignored (no check timer).
  auto ignored = informer_->AddEventHandlerWithResyncPeriod(quick, 5s);
  EXPECT_EQ(dynamic_cast<const ProcessorListener&>(**ignored).resync_period(), 0s);

  MakeInformer(60s);
  ASSERT_TRUE(informer_->AddEventHandlerWithResyncPeriod(quick, 5s).ok());
  lw_->ScriptList({MakeObj("ns", "a", "1")}, "1");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return quick->size() == 1; }));
  ASSERT_TRUE(WaitUntil([&] { return clock_.Waiters() == 1; }));
  clock_.Step(5s);
  ASSERT_TRUE(WaitUntil([&] { return quick->Saw("update a@1->1"); }));
}

// 4.5
TEST_F(SharedInformerTest, LateHandlerGetsCacheReplayWithOwnHasSyncedAndCanBeRemoved) {
  ASSERT_NO_FATAL_FAILURE(StartSyncedWithAnEarlyHandler());
  auto& early = early_;
  auto& w = watch_;

  std::latch release(1);
  auto late = std::make_shared<RecordingHandler>();
  late->hook = [&](const std::string&) { release.wait(); };
  auto registration = informer_->AddEventHandler(late);
  ASSERT_TRUE(registration.ok());
  EXPECT_FALSE((*registration)->HasSynced()) << "replay not handled yet";
  release.count_down();
  ASSERT_TRUE(WaitUntil([&] { return (*registration)->HasSynced(); }));
  EXPECT_THAT(late->events(), UnorderedElementsAre("add a@1 initial", "add b@1 initial"));

  ASSERT_TRUE(informer_->RemoveEventHandler(*registration).ok());
  EXPECT_FALSE(informer_->RemoveEventHandler(*registration).ok());
  w->Push(api::WatchEventType::kAdded, MakeObj("ns", "c", "2"));
  ASSERT_TRUE(WaitUntil([&] { return early->Saw("add c@2"); }));
  EXPECT_EQ(late->size(), 2u);

  Stop();
  EXPECT_TRUE(informer_->IsStopped());
  EXPECT_FALSE(informer_->AddEventHandler(std::make_shared<RecordingHandler>()).ok());
}

// 4.5
TEST_F(SharedInformerTest, RegistrationHasSyncedWaitsForTheInformerAndItsInitialAdds) {
  MakeInformer();
  std::latch release(1);
  auto handler = std::make_shared<RecordingHandler>();
  handler->hook = [&](const std::string&) { release.wait(); };
  auto registration = informer_->AddEventHandler(handler);
  ASSERT_TRUE(registration.ok());
  EXPECT_FALSE((*registration)->HasSynced());
  lw_->ScriptList({MakeObj("ns", "a", "1")}, "1");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_FALSE((*registration)->HasSynced());
  release.count_down();
  ASSERT_TRUE(WaitUntil([&] { return (*registration)->HasSynced(); }));
}

// 4.6
TEST_F(SharedInformerTest, TransformAndIndexersOnlyBeforeStart) {
  MakeInformer();
  ASSERT_TRUE(informer_->AddIndexers({{kNamespaceIndex, MetaNamespaceIndexFunc}}).ok());
  ASSERT_TRUE(informer_
                  ->SetTransform([](api::ObjectPtr obj) -> Result<api::ObjectPtr> {
                    return MakeObj(obj->Meta().namespace_, obj->Meta().name,
                                   obj->Meta().resource_version, "pruned");
                  })
                  .ok());
  lw_->ScriptList({MakeObj("ns", "a", "1", "full")}, "1");
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_EQ(Payload(informer_->GetIndexer()->GetByKey("ns/a")), "pruned");
  EXPECT_EQ(informer_->GetIndexer()->ByIndex(kNamespaceIndex, "ns")->size(), 1u);
  EXPECT_FALSE(informer_->SetTransform(nullptr).ok());
  EXPECT_FALSE(informer_->AddIndexers({{"other", MetaNamespaceIndexFunc}}).ok());
}

}  // namespace
}  // namespace kcm::cache
