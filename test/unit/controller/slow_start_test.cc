#include "pkg/controller/slow_start.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stop_token>
#include <thread>
#include <vector>

#include "pkg/metrics/first_write.h"

namespace kcm::controller {
namespace {

Status Fail(const std::string& message) {
  return Error::Local("Test", message);
}

// R7: batches 1, 2, 4, …; a failure in the third batch (calls 4-7) stops there: the batch
// finishes, its other calls count as successes, and no further batch starts.
TEST(SlowStartBatchTest, StopsAfterFirstBatchWithFailure) {
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(100, 1, [&]() -> Status {
    const int n = ++calls;
    return n == 4 ? Fail("call 4") : OkStatus();
  });
  EXPECT_EQ(calls.load(), 1 + 2 + 4);
  EXPECT_EQ(r.successes, 6);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().message, "call 4");
}

// R7: every call of a failing batch may fail; successes count only earlier batches.
TEST(SlowStartBatchTest, AllFailingBatch) {
  std::atomic<int> calls{0};
  SlowStartResult r =
      SlowStartBatch(10, 1, [&]() -> Status { return ++calls > 3 ? Fail("quota") : OkStatus(); });
  EXPECT_EQ(calls.load(), 7);
  EXPECT_EQ(r.successes, 3);
  EXPECT_FALSE(r.first_error.ok());
}

// R7: with no failure every call runs; the last batch is capped by what remains (1,2,4,3).
TEST(SlowStartBatchTest, RunsAllWhenNothingFails) {
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(10, 1, [&] {
    ++calls;
    return OkStatus();
  });
  EXPECT_EQ(calls.load(), 10);
  EXPECT_EQ(r.successes, 10);
  EXPECT_TRUE(r.first_error.ok());
  // A failure at call 8 (first of the capped last batch of 3) proves the last batch was 3 wide.
  calls = 0;
  r = SlowStartBatch(10, 1, [&]() -> Status { return ++calls == 8 ? Fail("x") : OkStatus(); });
  EXPECT_EQ(calls.load(), 10);
  EXPECT_EQ(r.successes, 9);
}

// R7: count 0 calls nothing; an initial batch larger than count is one batch.
TEST(SlowStartBatchTest, EdgeSizes) {
  std::atomic<int> calls{0};
  auto fn = [&] {
    ++calls;
    return OkStatus();
  };
  EXPECT_EQ(SlowStartBatch(0, 1, fn).successes, 0);
  EXPECT_EQ(calls.load(), 0);
  calls = 0;
  SlowStartResult r =
      SlowStartBatch(3, 8, [&]() -> Status { return ++calls == 1 ? Fail("first") : OkStatus(); });
  EXPECT_EQ(calls.load(), 3);  // one batch of 3, no second batch
  EXPECT_EQ(r.successes, 2);
}

// R7: the calls of one batch run concurrently: each call waits (up to 10 s of real time) until
// its whole batch has arrived, which only happens if they run at the same time.
TEST(SlowStartBatchTest, CallsWithinBatchRunConcurrently) {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  auto fn = [&]() -> Status {
    std::unique_lock lock(mu);
    const int index = arrived++;
    // Cumulative batch ends for batches 1, 2, 4, 8: 1, 3, 7, 15.
    int end = 1;
    while (end <= index) end = 2 * end + 1;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived >= end; })) {
      return Fail("batch did not run concurrently");
    }
    return OkStatus();
  };
  SlowStartResult r = SlowStartBatch(15, 1, fn);
  EXPECT_TRUE(r.first_error.ok()) << r.first_error.error().message;
  EXPECT_EQ(r.successes, 15);
}

// R7: a concurrency cap of 1 still runs every call of the batch (one after another).
TEST(SlowStartBatchTest, ConcurrencyCapStillRunsAll) {
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(
      20, 1,
      [&] {
        ++calls;
        return OkStatus();
      },
      /*max_concurrency=*/1);
  EXPECT_EQ(calls.load(), 20);
  EXPECT_EQ(r.successes, 20);
}

// Stop before the run: no call at all, and the result says it was stopped.
TEST(SlowStartBatchTest, StopRequestedBeforeStartCallsNothing) {
  std::stop_source stop;
  stop.request_stop();
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(
      500, 1,
      [&] {
        ++calls;
        return OkStatus();
      },
      64, stop.get_token());
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(r.successes, 0);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().reason, "Canceled");
}

// Stop during a batch (the lease is lost mid scale-up): the running call finishes, no further
// call of that batch and no further batch starts. One call at a time makes the count exact:
// batches 1, 2, 4 → calls 1..7; stop during call 5 leaves calls 6 and 7 (and 8+) unstarted.
TEST(SlowStartBatchTest, StopDuringBatchStartsNoFurtherCall) {
  std::stop_source stop;
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(
      500, 1,
      [&] {
        if (++calls == 5) stop.request_stop();
        return OkStatus();
      },
      /*max_concurrency=*/1, stop.get_token());
  EXPECT_EQ(calls.load(), 5);
  EXPECT_EQ(r.successes, 5);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().reason, "Canceled");
  EXPECT_NE(r.first_error.error().message.find("5 of 500"), std::string::npos)
      << r.first_error.error().message;
}

// With concurrent batches: a stop requested by the last call of batch 2 means batch 3 (4 calls)
// never starts.
TEST(SlowStartBatchTest, StopEndsBeforeTheNextBatch) {
  std::stop_source stop;
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(
      500, 1,
      [&] {
        if (++calls == 3) stop.request_stop();
        return OkStatus();
      },
      64, stop.get_token());
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(r.successes, 3);
  EXPECT_FALSE(r.first_error.ok());
}

// ParallelFor's threads carry the caller's first-write probe: a reconcile's first write sent from
// a pool thread still ends its reaction time, and only the first write counts.
TEST(ParallelForTest, PoolThreadsCarryTheCallersFirstWriteProbe) {
  std::atomic<int> fired{0};
  metrics::FirstWriteProbe probe([&] { ++fired; });
  metrics::ScopedFirstWriteProbe scope(&probe);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_pool{0};
  // Each call waits until every pool thread has started one, so the pool threads are busy.
  std::mutex mu;
  std::condition_variable cv;
  int started = 0;
  ParallelFor(4, 4, [&](int) {
    {
      std::unique_lock lock(mu);
      ++started;
      cv.notify_all();
      cv.wait(lock, [&] { return started == 4; });
    }
    if (std::this_thread::get_id() == caller) return;
    ++on_pool;
    EXPECT_EQ(metrics::CurrentFirstWriteProbe(), &probe);
    metrics::NoteWriteSent();
  });
  EXPECT_EQ(on_pool.load(), 3);
  EXPECT_EQ(fired.load(), 1);
  EXPECT_EQ(metrics::CurrentFirstWriteProbe(), &probe);
}

// A pool's threads are kept between calls: many small batches (a scale-up's 1, 2, 4, … one after
// another) run on the same few threads, never more than the bound, and each call returns only
// after all of its calls did.
TEST(WorkerPoolTest, ReusesBoundedThreadsAcrossCalls) {
  WorkerPool pool(3, std::chrono::seconds(60));
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mu;
  std::set<std::thread::id> helpers;
  for (int round = 0; round < 50; ++round) {
    const int n = 1 + round % 8;
    std::atomic<int> ran{0};
    std::vector<std::atomic<int>> each(static_cast<size_t>(n));
    pool.ParallelFor(n, 4, [&](int i) {
      ++each[static_cast<size_t>(i)];
      ++ran;
      if (std::this_thread::get_id() == caller) return;
      std::lock_guard lock(mu);
      helpers.insert(std::this_thread::get_id());
    });
    ASSERT_EQ(ran.load(), n) << "round " << round;
    for (const auto& c : each) ASSERT_EQ(c.load(), 1) << "round " << round;
    EXPECT_LE(pool.threads(), 3);
  }
  EXPECT_LE(helpers.size(), 3u);
}

// The pool gives a batch real concurrency: each call waits (up to 10 s) until all 8 have arrived,
// which only happens if 7 pool threads run beside the caller.
TEST(WorkerPoolTest, CallsRunConcurrently) {
  WorkerPool pool(16);
  for (int round = 0; round < 3; ++round) {
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
    std::atomic<int> late{0};
    pool.ParallelFor(8, 8, [&](int) {
      std::unique_lock lock(mu);
      ++arrived;
      cv.notify_all();
      if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 8; })) ++late;
    });
    EXPECT_EQ(late.load(), 0) << "round " << round;
  }
}

// Callers that together want more threads than the pool has still get every call run (the rest on
// their own threads), and the pool never exceeds its bound.
TEST(WorkerPoolTest, SaturatedPoolStillRunsEveryCall) {
  WorkerPool pool(2);
  std::atomic<int> ran{0};
  std::atomic<int> max_threads{0};
  std::vector<std::jthread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        pool.ParallelFor(16, 64, [&](int) {
          ++ran;
          int seen = pool.threads();
          int prev = max_threads.load();
          while (seen > prev && !max_threads.compare_exchange_weak(prev, seen)) {
          }
        });
      }
    });
  }
  callers.clear();  // joins
  EXPECT_EQ(ran.load(), 4 * 20 * 16);
  EXPECT_LE(max_threads.load(), 2);
}

// An idle pool ends its threads (an idle controller holds none) and starts them again for the next
// call.
TEST(WorkerPoolTest, IdleThreadsEndAndComeBack) {
  WorkerPool pool(4, std::chrono::milliseconds(20));
  std::atomic<int> ran{0};
  pool.ParallelFor(4, 4, [&](int) { ++ran; });
  EXPECT_EQ(ran.load(), 4);
  // Liveness bound: the threads end ~20 ms after their last call.
  for (int i = 0; i < 500 && pool.threads() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(pool.threads(), 0);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> late{0};
  pool.ParallelFor(4, 4, [&](int) {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 4; })) ++late;
  });
  EXPECT_EQ(late.load(), 0);
}

// SlowStartBatch on a pool keeps its semantics: batches 1, 2, 4 and a stop after the failing one;
// a stop request before a batch starts no call.
TEST(WorkerPoolTest, SlowStartBatchOnAPool) {
  WorkerPool pool(8);
  std::atomic<int> calls{0};
  SlowStartResult r = SlowStartBatch(
      100, 1,
      [&]() -> Status {
        const int n = ++calls;
        return n == 4 ? Fail("call 4") : OkStatus();
      },
      64, {}, &pool);
  EXPECT_EQ(calls.load(), 1 + 2 + 4);
  EXPECT_EQ(r.successes, 6);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().message, "call 4");

  std::stop_source stop;
  calls = 0;
  r = SlowStartBatch(
      500, 1,
      [&] {
        if (++calls == 3) stop.request_stop();
        return OkStatus();
      },
      64, stop.get_token(), &pool);
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(r.successes, 3);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().reason, "Canceled");
}

// The pool's threads carry the caller's first-write probe for the calls they run, and drop it
// afterwards (a later caller without a probe sees none on them).
TEST(WorkerPoolTest, PoolThreadsCarryTheCallersProbeOnlyForItsCalls) {
  WorkerPool pool(4, std::chrono::seconds(60));
  std::atomic<int> fired{0};
  metrics::FirstWriteProbe probe([&] { ++fired; });
  {
    metrics::ScopedFirstWriteProbe scope(&probe);
    std::atomic<int> wrong{0};
    pool.ParallelFor(4, 4, [&](int) {
      if (metrics::CurrentFirstWriteProbe() != &probe) ++wrong;
      metrics::NoteWriteSent();
    });
    EXPECT_EQ(wrong.load(), 0);
  }
  EXPECT_EQ(fired.load(), 1);
  std::atomic<int> with_probe{0};
  pool.ParallelFor(4, 4, [&](int) {
    if (metrics::CurrentFirstWriteProbe() != nullptr) ++with_probe;
  });
  EXPECT_EQ(with_probe.load(), 0);
}

}  // namespace
}  // namespace kcm::controller
