// SharedIndexInformer's sources (docs/design/sharding.md, "Serving a share"):
// an informer made without a ListerWatcher, fed by sources added and removed while it runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/cache/shared_informer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/cache/shared_informer_fixture.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::FakeListerWatcher;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::WaitUntil;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// Keys of namespace `ns` only.
SourceFilter InNamespace(std::string ns) {
  return [prefix = ns + "/"](std::string_view key) { return key.starts_with(prefix); };
}

class SharedInformerSourcesTest : public ::testing::Test {
 protected:
  void MakeInformer(Clock::duration resync = 0s) {
    informer_ = std::make_unique<SharedIndexInformer>(
        nullptr, SharedIndexInformerOptions{.name = "test",
                                            .expected_kind = "Fake",
                                            .resync_period = resync,
                                            .clock = &clock_,
                                            .rand = [] { return 0.5; }});
    handler_ = std::make_shared<RecordingHandler>(informer_->GetIndexer());
    ASSERT_TRUE(informer_->AddEventHandler(handler_).ok());
  }
  void Start() {
    runner_ = std::jthread([this](std::stop_token st) { informer_->Run(st); });
  }
  void TearDown() override {
    if (runner_.joinable()) {
      runner_.request_stop();
      runner_.join();
    }
  }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys = informer_->GetStore()->ListKeys();
    std::sort(keys.begin(), keys.end());
    return keys;
  }

  FakeClock clock_;
  std::shared_ptr<FakeListerWatcher> a_ = std::make_shared<FakeListerWatcher>();
  std::shared_ptr<FakeListerWatcher> b_ = std::make_shared<FakeListerWatcher>();
  std::unique_ptr<SharedIndexInformer> informer_;
  std::shared_ptr<RecordingHandler> handler_;
  std::jthread runner_;
};

TEST_F(SharedInformerSourcesTest, WithoutSourcesARunningInformerIsSyncedAndEmpty) {
  MakeInformer();
  EXPECT_FALSE(informer_->HasSynced()) << "not before Run";
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_TRUE(Keys().empty());
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("a/x"), "");
}

// Two sources feed one indexer; a relist of one (its watch expired) tombstones what it no longer
// lists and nothing of the other's, though the other's keys are not in its list either.
TEST_F(SharedInformerSourcesTest, SourcesFeedOneIndexerAndARelistDeletesOnlyItsOwn) {
  MakeInformer();
  a_->ScriptList({MakeObj("a", "x", "1"), MakeObj("a", "y", "1")}, "1");
  auto wa = a_->ScriptWatch();
  a_->ScriptList({MakeObj("a", "x", "4")}, "4");  // the relist after the watch expires
  b_->ScriptList({MakeObj("b", "z", "2")}, "2");
  auto wb = b_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok()) << "before Run";
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  ASSERT_TRUE(informer_->AddSource("b", b_, InNamespace("b")).ok()) << "after Run";
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 3; }));
  EXPECT_THAT(Keys(), ElementsAre("a/x", "a/y", "b/z"));

  wa->PushError(Error{410, "Expired", "too old", {}});
  ASSERT_TRUE(clock_.WaitForWaiters(1));  // a's backoff before relisting
  clock_.Step(2s);
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 5; }));
  EXPECT_THAT(handler_->events(),
              UnorderedElementsAre("add x@1 initial", "add y@1 initial", "add z@2 initial",
                                   "update x@1->4", "delete tombstone a/y"));
  EXPECT_THAT(Keys(), ElementsAre("a/x", "b/z"));
  wb->Push(api::WatchEventType::kModified, MakeObj("b", "z", "5"));
  ASSERT_TRUE(WaitUntil([&] { return handler_->Saw("update z@2->5"); }));
}

// Each source has its own stream: the watermark for a key is its owner's, however far another
// source has gone.
TEST_F(SharedInformerSourcesTest, TheWatermarkForAKeyIsItsSourcesOwn) {
  MakeInformer();
  a_->ScriptList({}, "3");
  auto wa = a_->ScriptWatch();
  b_->ScriptList({}, "7");
  auto wb = b_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  ASSERT_TRUE(informer_->AddSource("b", b_, InNamespace("b")).ok());
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("a/x"), "3");
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("b/x"), "7");
  wa->Push(api::WatchEventType::kAdded, MakeObj("a", "x", "9"));
  ASSERT_TRUE(WaitUntil([&] { return informer_->LastStoreSyncResourceVersionFor("a/x") == "9"; }));
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("b/x"), "7");
  wb->PushBookmark("12");
  ASSERT_TRUE(WaitUntil([&] { return informer_->LastStoreSyncResourceVersionFor("b/y") == "12"; }));
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("a/x"), "9");
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("c/x"), "") << "no source owns c";
}

// A removed source's objects leave the cache with a delete each, their last state, and the
// other source's stay; the informer is still synced, and the source can come back.
TEST_F(SharedInformerSourcesTest, RemoveSourceDeletesItsObjectsAndStopsItsWatch) {
  MakeInformer();
  a_->ScriptList({MakeObj("a", "x", "1"), MakeObj("a", "y", "1")}, "1");
  auto wa = a_->ScriptWatch();
  b_->ScriptList({MakeObj("b", "z", "2")}, "2");
  b_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  ASSERT_TRUE(informer_->AddSource("b", b_, InNamespace("b")).ok());
  Start();
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 3; }));
  wa->Push(api::WatchEventType::kModified, MakeObj("a", "y", "3"));
  ASSERT_TRUE(WaitUntil([&] { return handler_->Saw("update y@1->3"); }));

  ASSERT_TRUE(informer_->RemoveSource("a").ok());
  EXPECT_TRUE(wa->stopped());
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 6; }));
  const std::vector<std::string> events = handler_->events();
  EXPECT_THAT(std::vector(events.begin() + 4, events.end()),
              UnorderedElementsAre("delete x", "delete y"));
  EXPECT_THAT(Keys(), ElementsAre("b/z"));
  EXPECT_TRUE(informer_->HasSynced());
  EXPECT_EQ(informer_->LastStoreSyncResourceVersionFor("a/x"), "");
  EXPECT_FALSE(informer_->RemoveSource("a").ok()) << "removed already";

  a_->ScriptList({MakeObj("a", "x", "8")}, "8");
  a_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  ASSERT_TRUE(WaitUntil([&] { return handler_->Saw("add x@8 initial"); }));
  EXPECT_THAT(Keys(), ElementsAre("a/x", "b/z"));
}

// A source added to a synced informer makes it unsynced until that source's first list is in:
// whoever waits for the cache waits for the new share too.
TEST_F(SharedInformerSourcesTest, ASourceAddedLaterUnsyncsTheInformerUntilItsListIsIn) {
  MakeInformer();
  Start();
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  a_->ScriptList(Error{500, "InternalError", "not yet", {}});
  a_->ScriptList({MakeObj("a", "x", "1")}, "1");
  a_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  ASSERT_TRUE(clock_.WaitForWaiters(1));  // the backoff after the failed list
  EXPECT_FALSE(informer_->HasSynced());
  clock_.Step(2s);
  ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  EXPECT_THAT(Keys(), ElementsAre("a/x"));
}

// One resync timer for every source: a due handler hears of each source's objects.
TEST_F(SharedInformerSourcesTest, OneResyncTimerResyncsEverySource) {
  MakeInformer(10s);
  a_->ScriptList({MakeObj("a", "x", "1")}, "1");
  a_->ScriptWatch();
  b_->ScriptList({MakeObj("b", "z", "2")}, "2");
  b_->ScriptWatch();
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  ASSERT_TRUE(informer_->AddSource("b", b_, InNamespace("b")).ok());
  Start();
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 2; }));
  ASSERT_TRUE(WaitUntil([&] { return clock_.Waiters() == 1; }));  // the one timer
  clock_.Step(10s);
  ASSERT_TRUE(WaitUntil([&] { return handler_->size() == 4; }));
  EXPECT_TRUE(handler_->Saw("update x@1->1"));
  EXPECT_TRUE(handler_->Saw("update z@2->2"));
}

// A source added while Run starts is started once, by one of them (a second start would join the
// first's threads, which never end: Run hung).
TEST_F(SharedInformerSourcesTest, ASourceAddedAsRunStartsIsStartedOnce) {
  for (int i = 0; i < 50; ++i) {
    MakeInformer();
    auto lw = std::make_shared<FakeListerWatcher>();
    lw->ScriptList({MakeObj("a", "x", "1")}, "1");
    Start();
    ASSERT_TRUE(informer_->AddSource("a", lw, InNamespace("a")).ok());
    ASSERT_TRUE(WaitUntil([&] { return informer_->SourceHasSynced("a"); })) << "round " << i;
    EXPECT_EQ(lw->num_lists(), 1u);
    runner_.request_stop();
    runner_.join();
  }
}

TEST_F(SharedInformerSourcesTest, AddSourceRefusals) {
  MakeInformer();
  EXPECT_FALSE(informer_->AddSource("a", nullptr, InNamespace("a")).ok());
  EXPECT_FALSE(informer_->AddSource("a", a_, nullptr).ok());
  ASSERT_TRUE(informer_->AddSource("a", a_, InNamespace("a")).ok());
  EXPECT_FALSE(informer_->AddSource("a", b_, InNamespace("b")).ok()) << "name taken";
  EXPECT_FALSE(informer_->RemoveSource("b").ok());
  Start();
  runner_.request_stop();
  runner_.join();
  EXPECT_FALSE(informer_->AddSource("b", b_, InNamespace("b")).ok()) << "stopped";

  SharedIndexInformer with_own(a_, SharedIndexInformerOptions{.clock = &clock_});
  Status s = with_own.AddSource("b", b_, InNamespace("b"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().ToString(), ::testing::HasSubstr("takes no source"));
}

}  // namespace
}  // namespace kcm::cache
