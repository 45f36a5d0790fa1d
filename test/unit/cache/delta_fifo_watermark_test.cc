// DeltaFIFO tests of what the queue reports as applied: LastStoreSyncResourceVersion (the
// store-sync watermark), bookmarks, the store-sync listener and AfterApplied.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/delta_fifo.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "test/unit/cache/delta_fifo_test_util.h"

namespace kcm::cache {
namespace {

using ::kcm::mocks::MakeObj;
using ::kcm::mocks::Payload;
using ::testing::ElementsAre;

// client-go Store.LastStoreSyncResourceVersion (AtomicFIFO): how far the consumer has applied the
// stream. Our FIFO merges the deltas of a key, so "a" queued first and updated last is applied
// before "b"'s older event: the watermark must not pass b's RV until b was popped.
TEST(DeltaFIFOTest, LastStoreSyncResourceVersionNeverPassesAnUnappliedEvent) {
  DeltaFIFO fifo({});
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "11")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "12")).ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");  // nothing applied yet

  EXPECT_EQ(PopOne(fifo).key, "ns/a");  // a@10 and a@12 applied, b@11 still queued
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");
  EXPECT_EQ(PopOne(fifo).key, "ns/b");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "12");
}

TEST(DeltaFIFOTest, LastStoreSyncResourceVersionCountsAListOnceAllOfItIsApplied) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "3"), MakeObj("ns", "b", "5")}, "7").ok());
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "7");
  // An empty list is applied at once.
  ASSERT_TRUE(fifo.Replace({}, "9").ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "9");
}

// Each queued key records the pushes its deltas belong to in its own entry (no side maps): a key
// carrying deltas of several pushes holds each of them back until it is popped, a list naming a
// key twice counts it once (HasSynced after one pop of it), and a key listed again is not taken
// for a vanished one.
TEST(DeltaFIFOTest, PushesHeldBackByEveryKeyCarryingThem) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "gone", "11")).ok());
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "b", "12", "b1"), MakeObj("ns", "a", "12"),
                            MakeObj("ns", "b", "12", "b2")},
                           "20")
                  .ok());
  // a: Added@10 + Replaced@20; gone: Added@11 + its tombstone@20; b: Replaced twice, one key.
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/gone", "ns/b"));
  Popped a = PopOne(fifo);
  EXPECT_THAT(Types(a.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kReplaced));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");  // gone@11 and the list still queued
  Popped gone = PopOne(fifo);
  EXPECT_THAT(Types(gone.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kDeleted));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "11");  // b of the list still queued
  Popped b = PopOne(fifo);
  EXPECT_THAT(Types(b.deltas), ElementsAre(DeltaType::kReplaced, DeltaType::kReplaced));
  EXPECT_EQ(Payload(b.deltas[1].object), "b2");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "20");
  EXPECT_EQ(fifo.Len(), 0u);

  // The first list: synced once each distinct key is popped (b counted once).
  DeltaFIFO first({});
  ASSERT_TRUE(
      first
          .Replace({MakeObj("ns", "b", "1"), MakeObj("ns", "c", "1"), MakeObj("ns", "b", "1")}, "5")
          .ok());
  EXPECT_EQ(PopOne(first).key, "ns/b");
  EXPECT_FALSE(first.HasSynced());
  EXPECT_EQ(PopOne(first).key, "ns/c");
  EXPECT_TRUE(first.HasSynced());
  EXPECT_EQ(first.LastStoreSyncResourceVersion(), "5");
}

TEST(DeltaFIFOTest, BookmarkAdvancesOnlyPastWhatWasApplied) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "20")).ok());
  fifo.Bookmark("25");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");  // a@20 still queued
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "25");
  fifo.Bookmark("30");  // nothing queued: at once
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "30");
  // A deletion of a key neither queued nor known is dropped, and counts as applied.
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "gone", "31")).ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "31");
}

// A drained queue frees the maps a big list grew (Pop): the queue behaves the same afterwards —
// keys queued once in order, deltas merged, the watermark and HasSynced intact.
TEST(DeltaFIFOTest, QueueWorksAfterABigListIsDrained) {
  DeltaFIFO fifo({});
  std::vector<api::ObjectPtr> items;
  for (int i = 0; i < 5000; ++i) items.push_back(MakeObj("ns", "p" + std::to_string(i), "3"));
  ASSERT_TRUE(fifo.Replace(std::move(items), "10").ok());
  for (int i = 0; i < 5000; ++i) PopOne(fifo);
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");
  EXPECT_EQ(fifo.Len(), 0u);

  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "11", "a1")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "12")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "13", "a2")).ok());
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/b"));
  EXPECT_EQ(fifo.GetByKey("ns/a").size(), 2u);
  Popped a = PopOne(fifo);
  EXPECT_EQ(a.key, "ns/a");
  EXPECT_THAT(Types(a.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kUpdated));
  EXPECT_EQ(Payload(a.deltas[1].object), "a2");
  EXPECT_FALSE(a.is_in_initial_list);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "11");  // b@12 still queued
  EXPECT_EQ(PopOne(fifo).key, "ns/b");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "13");
}

// on_store_sync_advanced: called (without the lock: it may read the watermark) each time the
// watermark moves, from whichever call moved it, and not when it stays.
TEST(DeltaFIFOTest, StoreSyncListenerHearsEveryMoveOfTheWatermark) {
  std::vector<std::string> heard;
  DeltaFIFO* self = nullptr;
  DeltaFIFO fifo(
      {.on_store_sync_advanced = [&] { heard.push_back(self->LastStoreSyncResourceVersion()); }});
  self = &fifo;
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "11")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "12")).ok());
  fifo.Bookmark("13");  // behind queued events: no move
  EXPECT_THAT(heard, ElementsAre());
  PopOne(fifo);         // a: the watermark stops before b@11
  PopOne(fifo);         // b: everything, up to the bookmark
  fifo.Bookmark("13");  // same RV again: no move
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "gone", "14")).ok());
  ASSERT_TRUE(fifo.Replace({}, "15").ok());
  EXPECT_THAT(heard, ElementsAre("10", "13", "14", "15"));
}

// Pop's after_applied runs after process (before HasSynced turns true), also when process failed.
TEST(DeltaFIFOTest, AfterAppliedRunsAfterProcessEvenOnError) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  std::vector<std::string> order;
  Status s = fifo.Pop(
      [&](const Deltas&, bool) {
        order.push_back("process");
        return Error::Local("Failed", "no");
      },
      [&] { order.push_back("after_applied"); });
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(order, ElementsAre("process", "after_applied"));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");  // dropped, as applied
}

// after_applied runs without the queue lock, so what it calls (an informer's non-blocking event
// handlers) can read the watermark, HasSynced and the queue: the watermark already counts the
// popped item, while HasSynced stays false until after_applied of the last initial item has
// returned (whoever hands out notifications there has handed out all of them first). Under the
// queue lock these reads would deadlock.
TEST(DeltaFIFOTest, AfterAppliedRunsWithoutTheLockBeforeHasSyncedTurnsTrue) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "2")}, "7").ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "c", "9")).ok());
  std::vector<std::string> seen;
  auto pop = [&] {
    std::string key;
    Status s = fifo.Pop(
        [&](const Deltas& deltas, bool initial) {
          key = fifo.KeyOf(*deltas.back().object) + (initial ? " initial" : "");
          return OkStatus();
        },
        [&] {
          seen.push_back(key + " rv=" + fifo.LastStoreSyncResourceVersion() + " synced=" +
                         (fifo.HasSynced() ? "1" : "0") + " queued=" + std::to_string(fifo.Len()));
        });
    ASSERT_TRUE(s.ok());
    seen.push_back("after pop synced=" + std::string(fifo.HasSynced() ? "1" : "0"));
  };
  pop();
  pop();
  pop();
  EXPECT_THAT(seen, ElementsAre("ns/a initial rv= synced=0 queued=2", "after pop synced=0",
                                "ns/b initial rv=7 synced=0 queued=1", "after pop synced=1",
                                "ns/c rv=9 synced=1 queued=0", "after pop synced=1"));
}

}  // namespace
}  // namespace kcm::cache
