// DeltaFIFO tests of how consumers wait and are woken: WaitForItem, pushes of one watch
// read, and a blocked consumer woken once per push or per read.
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

// A sole consumer can wait for an item without holding its own lock, then Pop under it.
TEST(DeltaFIFOTest, WaitForItemWaitsForAKeyAndReportsClose) {
  DeltaFIFO fifo({});
  std::atomic<bool> woke{false};
  std::jthread waiter([&] {
    EXPECT_TRUE(fifo.WaitForItem());
    woke = true;
  });
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1")).ok());
  waiter.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(fifo.Len(), 1u) << "nothing popped";
  EXPECT_TRUE(fifo.WaitForItem());
  fifo.Close();
  EXPECT_FALSE(fifo.WaitForItem()) << "closed, even with a key queued";
}

// The timed wait of an informer with compactions pending: it returns at the deadline with nothing
// queued, at once when a key is (or comes), and false once closed.
TEST(DeltaFIFOTest, WaitForItemForReturnsAtItsDeadlineOrWithAKey) {
  DeltaFIFO fifo({});
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::milliseconds(20)));
  EXPECT_FALSE(fifo.IsClosed());
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::steady_clock::duration::zero()));
  std::jthread waiter([&] { EXPECT_TRUE(fifo.WaitForItemFor(std::chrono::minutes(5))); });
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1")).ok());
  waiter.join();
  EXPECT_TRUE(fifo.WaitForItemFor(std::chrono::steady_clock::duration::zero()));
  fifo.Close();
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::minutes(5))) << "closed, even with a key queued";
  EXPECT_TRUE(fifo.IsClosed());
}

// A watch event's push signals the consumer only when it is blocked: a consumer that alternates
// between applying and blocking must still be woken for every push (no lost wake-up). 20,000
// pushes from a producer against a consumer that waits in WaitForItem and in Pop in turn; every
// key arrives, and the last one arrives while the consumer is blocked.
TEST(DeltaFIFOTest, ConsumerBlockedBetweenPushesIsWokenForEachOne) {
  DeltaFIFO fifo({});
  constexpr int kPushes = 20000;
  std::atomic<int> applied{0};
  std::jthread consumer([&] {
    for (int i = 0;; ++i) {
      if (i % 2 == 0 && !fifo.WaitForItem()) return;
      Status s = fifo.Pop([&](const Deltas& deltas, bool) {
        applied += static_cast<int>(deltas.size());
        return OkStatus();
      });
      if (!s.ok()) return;
    }
  });
  for (int i = 0; i < kPushes; ++i) {
    const std::string name = "o" + std::to_string(i);
    ASSERT_TRUE(fifo.Add(MakeObj("ns", name, "1")).ok());
    if (i % 3 == 0) std::this_thread::yield();
  }
  // Liveness bound: an implementation that loses a wake-up leaves the consumer blocked with
  // items queued.
  for (int i = 0; i < 1000 && applied.load() < kPushes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), kPushes);
  // The consumer is (or soon is) blocked on an empty queue: one more push of each kind wakes it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "o1", "2")).ok());
  for (int i = 0; i < 500 && applied.load() < kPushes + 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), kPushes + 1);
  fifo.Close();
}

api::WatchEvent Event(api::WatchEventType type, api::ObjectPtr obj) {
  api::WatchEvent e;
  e.type = type;
  e.object = std::move(obj);
  return e;
}

// Everything a queue shows of what it holds: each key popped in order with its delta types and
// payloads, and the watermark after each pop.
std::vector<std::string> DrainDescribed(DeltaFIFO& fifo) {
  std::vector<std::string> out;
  while (fifo.Len() > 0) {
    Popped p = PopOne(fifo);
    std::string line = p.key + ":";
    for (const Delta& d : p.deltas) {
      line += " " + std::string(DeltaTypeName(d.type)) + "/" +
              (AsTombstone(*d.object) ? "tombstone" : Payload(d.object));
    }
    out.push_back(line + " rv=" + fifo.LastStoreSyncResourceVersion());
  }
  return out;
}

// A read's events handed over at once queue exactly what Add, Update and Delete one by one queue:
// the same keys in the same order, the same deltas, the same watermark after each pop; a
// deletion of an unknown key is dropped and moves the watermark, a queued one is kept.
TEST(DeltaFIFOTest, WatchEventsOfOneReadQueueAsSeparatePushes) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "known", "1")).ok());
  DeltaFIFO one_by_one({.known_objects = known});
  DeltaFIFO batched({.known_objects = known});
  ASSERT_TRUE(one_by_one.Add(MakeObj("ns", "old", "2", "old2")).ok());
  ASSERT_TRUE(batched.Add(MakeObj("ns", "old", "2", "old2")).ok());

  ASSERT_TRUE(one_by_one.Add(MakeObj("ns", "a", "3", "a3")).ok());
  ASSERT_TRUE(one_by_one.Update(MakeObj("ns", "old", "4", "old4")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "ghost", "5")).ok());
  ASSERT_TRUE(one_by_one.Update(MakeObj("ns", "a", "6", "a6")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "known", "7", "gone")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "a", "8", "a8")).ok());

  std::vector<api::WatchEvent> read;
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "a", "3", "a3")));
  read.push_back(Event(api::WatchEventType::kModified, MakeObj("ns", "old", "4", "old4")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "ghost", "5")));
  read.push_back(Event(api::WatchEventType::kModified, MakeObj("ns", "a", "6", "a6")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "known", "7", "gone")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "a", "8", "a8")));
  ASSERT_TRUE(batched.AddWatchEvents(read).ok());

  EXPECT_EQ(batched.ListKeys(), one_by_one.ListKeys());
  const std::vector<std::string> want = DrainDescribed(one_by_one);
  EXPECT_EQ(DrainDescribed(batched), want);
  // The watermark stops short of the oldest push still queued: a3 after "old", known's 7 after "a".
  EXPECT_THAT(want, ElementsAre("ns/old: Added/old2 Updated/old4 rv=2",
                                "ns/a: Added/a3 Updated/a6 Deleted/a8 rv=6",
                                "ns/known: Deleted/gone rv=8"));
}

// A bookmark or an event without an object is not queued (the first failure is returned), and the
// events around it are, in order.
TEST(DeltaFIFOTest, WatchEventsRefuseWhatIsNotAnObjectChange) {
  DeltaFIFO fifo({});
  std::vector<api::WatchEvent> read;
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "a", "1")));
  read.push_back(Event(api::WatchEventType::kBookmark, MakeObj("", "", "2")));
  read.push_back(Event(api::WatchEventType::kModified, nullptr));
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "b", "3")));
  Status s = fifo.AddWatchEvents(read);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().reason, "InvalidWatchEvent");
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/b"));
}

// A consumer blocked on an empty queue is woken by a read's events once and finds every one of
// them queued (pushed one by one, it could wake after the first and find one key); across many
// reads against a consumer that applies as they come, none is lost.
TEST(DeltaFIFOTest, ConsumerWokenOnceFindsTheWholeRead) {
  DeltaFIFO fifo({});
  std::atomic<std::size_t> seen_on_wake{0};
  std::atomic<bool> woke{false};
  std::jthread first([&] {
    if (!fifo.WaitForItem()) return;
    seen_on_wake = fifo.Len();
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it block
  std::vector<api::WatchEvent> read;
  for (int i = 0; i < 50; ++i) {
    read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "o" + std::to_string(i))));
  }
  ASSERT_TRUE(fifo.AddWatchEvents(read).ok());
  first.join();
  ASSERT_TRUE(woke.load());
  EXPECT_EQ(seen_on_wake.load(), 50u);
  while (fifo.Len() > 0) PopOne(fifo);

  constexpr int kReads = 2000;
  std::atomic<int> applied{0};
  std::jthread consumer([&] {
    while (fifo.WaitForItem()) {
      Status s = fifo.Pop([&](const Deltas& deltas, bool) {
        applied += static_cast<int>(deltas.size());
        return OkStatus();
      });
      if (!s.ok()) return;
    }
  });
  for (int r = 0; r < kReads; ++r) {
    std::vector<api::WatchEvent> events;
    for (int i = 0; i < 1 + r % 4; ++i) {
      events.push_back(Event(api::WatchEventType::kModified,
                             MakeObj("ns", "k" + std::to_string(r) + "-" + std::to_string(i))));
    }
    ASSERT_TRUE(fifo.AddWatchEvents(events).ok());
    if (r % 3 == 0) std::this_thread::yield();
  }
  const int want = kReads / 4 * (1 + 2 + 3 + 4);
  for (int i = 0; i < 1000 && applied.load() < want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), want);
  fifo.Close();
}

}  // namespace
}  // namespace kcm::cache
