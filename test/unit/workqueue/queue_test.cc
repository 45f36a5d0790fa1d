#include "pkg/workqueue/queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "pkg/util/testing/fake_clock.h"
#include "pkg/workqueue/delaying_queue.h"
#include "test/unit/workqueue/wait_until.h"

namespace kcm::workqueue {
namespace {

using testing::WaitUntil;
using namespace std::chrono_literals;

// A negative check: `f` stays unready for a short real-time window. It can only miss a bug, never
// report a false failure.
template <typename T>
bool StaysBlocked(std::future<T>& f) {
  return f.wait_for(20ms) == std::future_status::timeout;
}

// 7.1
TEST(QueueTest, AddDeduplicatesWaitingKey) {
  Queue q;
  q.Add("ns/a");
  q.Add("ns/a");
  q.Add("ns/b");
  EXPECT_EQ(q.Len(), 2);
  EXPECT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(q.Get(), "ns/b");
  EXPECT_EQ(q.Len(), 0);
}

// The item carries the time of the key's first Add since it was last handed out (the start of
// controller_reaction_duration_seconds): a deduplicated Add keeps the earlier time, and an Add
// while a worker holds the key starts a new one. ready_at is when a worker could first have
// taken the key: the Add, or the Done of the worker that held it.
TEST(QueueTest, GetItemCarriesTheFirstAddTime) {
  FakeClock clock;
  Queue q(QueueConfig{.name = "", .clock = &clock});
  const Clock::time_point t0 = clock.Now();
  q.Add("ns/a");
  clock.Step(3ms);
  q.Add("ns/a");
  auto item = q.GetItem();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->key, "ns/a");
  EXPECT_EQ(item->added_at, t0);
  EXPECT_EQ(item->ready_at, t0);
  clock.Step(5ms);
  q.Add("ns/a");  // While held: queued again at Done, with this time.
  clock.Step(1ms);
  q.Add("ns/a");
  clock.Step(6ms);
  q.Done("ns/a");
  item = q.GetItem();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->added_at, t0 + 8ms);
  EXPECT_EQ(item->ready_at, t0 + 15ms);  // 7 ms behind the sync in flight
}

// A delayed add (a retry's or a requeue-after's timer) stamps no event time but does make the
// key ready; an event's Add to the waiting key then stamps the event time and leaves ready_at.
TEST(QueueTest, DelayedAddIsReadyWithoutAnEventTime) {
  FakeClock clock;
  DelayingQueue q(QueueConfig{.name = "", .clock = &clock});
  const Clock::time_point t0 = clock.Now();
  q.AddAfter("ns/a", 0ms);
  auto item = q.GetItem();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->added_at, std::nullopt);
  EXPECT_EQ(item->ready_at, t0);
  q.Done("ns/a");
  q.AddAfter("ns/a", 0ms);
  clock.Step(2ms);
  q.Add("ns/a");
  item = q.GetItem();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->added_at, t0 + 2ms);
  EXPECT_EQ(item->ready_at, t0);
}

// 7.1
TEST(QueueTest, KeyAddedWhileProcessingIsRequeuedOnlyAfterDone) {
  Queue q;
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  q.Add("ns/a");
  q.Add("ns/a");  // Still one pending re-add.
  EXPECT_EQ(q.Len(), 0) << "a key being processed must not be handed to a second worker";
  q.Done("ns/a");
  EXPECT_EQ(q.Len(), 1);
  EXPECT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");
  EXPECT_EQ(q.Len(), 0);
}

// 7.1: upstream's Typed.Done pushes a key re-added while it was processed and signals the
// condition; here Done signals after unlocking, and a worker already asleep in Get must still wake.
TEST(QueueTest, DoneWakesAWorkerBlockedInGetForAKeyReaddedWhileProcessing) {
  Queue q;
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  q.Add("ns/a");  // Held back until Done.
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  EXPECT_TRUE(StaysBlocked(got));
  q.Done("ns/a");
  ASSERT_EQ(got.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(got.get(), "ns/a");
}

// 7.1
TEST(QueueTest, DoneWithoutRequeueLeavesQueueEmpty) {
  Queue q;
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");
  EXPECT_EQ(q.Len(), 0);
  q.Add("ns/a");  // No longer processing: queued at once.
  EXPECT_EQ(q.Len(), 1);
}

// 7.1
TEST(QueueTest, DoneForKeyNotBeingProcessedIsIgnored) {
  Queue q;
  q.Add("ns/a");
  q.Done("ns/a");  // Waiting, not processing: must not queue it twice.
  q.Done("ns/never-added");
  EXPECT_EQ(q.Len(), 1);
}

// 7.1
TEST(QueueTest, AddAfterShutDownIsIgnored) {
  Queue q;
  q.ShutDown();
  q.Add("ns/a");
  EXPECT_EQ(q.Len(), 0);
  EXPECT_EQ(q.Get(), std::nullopt);
}

// 7.2
TEST(QueueTest, GetIsFifo) {
  Queue q;
  for (const char* key : {"ns/c", "ns/a", "ns/b"}) q.Add(key);
  EXPECT_EQ(q.Get(), "ns/c");
  EXPECT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(q.Get(), "ns/b");
}

// 7.2
TEST(QueueTest, GetBlocksUntilAKeyIsAdded) {
  Queue q;
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  EXPECT_TRUE(StaysBlocked(got));
  q.Add("ns/a");
  ASSERT_EQ(got.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(got.get(), "ns/a");
}

// 7.2
TEST(QueueTest, ShutDownDrainsWaitingKeysThenReportsShutdown) {
  Queue q;
  q.Add("ns/a");
  q.Add("ns/b");
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(q.Get(), "ns/b");
  EXPECT_EQ(q.Get(), std::nullopt);
}

// 7.2: a key re-added while a worker held it before shutdown is still handed out by the drain.
TEST(QueueTest, KeyReaddedWhileProcessingIsDrainedAfterShutDown) {
  Queue q;
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  q.Add("ns/a");
  q.ShutDown();
  q.Done("ns/a");
  EXPECT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");
  EXPECT_EQ(q.Get(), std::nullopt);
}

// 7.2
TEST(QueueTest, ShutDownReleasesBlockedGet) {
  Queue q;
  auto got = std::async(std::launch::async, [&] { return q.Get(); });
  EXPECT_TRUE(StaysBlocked(got));
  q.ShutDown();
  ASSERT_EQ(got.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(got.get(), std::nullopt);
}

// 7.2
TEST(QueueTest, ShutDownWithDrainWaitsForInFlightDone) {
  Queue q;
  q.Add("ns/a");
  q.Add("ns/b");
  ASSERT_EQ(q.Get(), "ns/a");
  ASSERT_EQ(q.Get(), "ns/b");
  auto drained = std::async(std::launch::async, [&] { q.ShutDownWithDrain(); });
  ASSERT_TRUE(WaitUntil([&] { return q.ShuttingDown(); }));
  q.Add("ns/c");  // Shutting down: ignored, so the drain does not wait for it.
  EXPECT_EQ(q.Len(), 0);
  q.Done("ns/a");
  EXPECT_TRUE(StaysBlocked(drained)) << "ns/b is still in flight";
  q.Done("ns/b");
  EXPECT_EQ(drained.wait_for(10s), std::future_status::ready);
}

// 7.2
TEST(QueueTest, ShutDownWithDrainReturnsAtOnceWhenNothingInFlight) {
  Queue q;
  q.Add("ns/a");  // Waiting, not in flight.
  q.ShutDownWithDrain();
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_EQ(q.Get(), "ns/a");
}

// 7.2
TEST(QueueTest, ShutDownReleasesAPendingDrain) {
  Queue q;
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  auto drained = std::async(std::launch::async, [&] { q.ShutDownWithDrain(); });
  EXPECT_TRUE(StaysBlocked(drained));
  q.ShutDown();
  EXPECT_EQ(drained.wait_for(10s), std::future_status::ready);
  q.Done("ns/a");
}

// 7.1 under load: N workers, M keys, producers re-adding keys at random. No key is ever held by
// two workers at once, and the last version written before an Add is always processed (nothing
// is lost to deduplication).
TEST(QueueTest, ConcurrentWorkersNeverProcessAKeyTwiceAtOnce) {
  constexpr int kWorkers = 8;
  constexpr int kKeys = 16;
  constexpr int kProducers = 3;
  constexpr int kAddsPerProducer = 3000;

  Queue q;
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back("ns/key-" + std::to_string(i));
  std::vector<std::atomic<int>> in_flight(kKeys);
  std::vector<std::atomic<int>> written(kKeys);    // Version a producer wrote before Add.
  std::vector<std::atomic<int>> processed(kKeys);  // Highest version a worker saw.
  std::atomic<int> overlaps{0};
  std::atomic<int> version{0};

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        int i = std::stoi(key->substr(key->find('-') + 1));
        if (in_flight[i].fetch_add(1) != 0) overlaps.fetch_add(1);
        int seen = written[i].load();
        if (seen > processed[i].load()) processed[i].store(seen);
        std::this_thread::yield();
        in_flight[i].fetch_sub(1);
        q.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 rng(p);
      for (int n = 0; n < kAddsPerProducer; ++n) {
        int i = static_cast<int>(rng() % kKeys);
        int v = version.fetch_add(1) + 1;
        // Keep the highest version; producers race, so only move it forward.
        int cur = written[i].load();
        while (cur < v && !written[i].compare_exchange_weak(cur, v)) {
        }
        q.Add(keys[i]);
      }
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDown();  // Workers drain what is left, including keys re-queued by Done.
  for (auto& t : workers) t.join();

  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(q.Len(), 0);
  for (int i = 0; i < kKeys; ++i) {
    EXPECT_EQ(processed[i].load(), written[i].load()) << keys[i];
  }
}

}  // namespace
}  // namespace kcm::workqueue
