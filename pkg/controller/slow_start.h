// SlowStartBatch (upstream slowStartBatch): run `count` calls in batches of 1, 2, 4, … (each batch
// concurrently), stopping after the first batch with a failure, so a create that is going to fail
// (quota, admission) fails once instead of `count` times. Blocks until its calls return;
// thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::controller {

// Threads kept between ParallelFor calls, so a scale-up's slow-start batches (1, 2, 4, … calls,
// one batch after another, several workers at once) do not create and join a thread per call of
// every batch. At most `max_threads` exist; a thread that found no work for `idle_exit` ends, so an
// idle controller holds none (their stacks and the RSS they touched go away, as they did when
// every batch made its own). Owned by the controller whose syncs use it; it must outlive every
// ParallelFor call on it, and its destructor joins its threads.
class WorkerPool {
 public:
  explicit WorkerPool(int max_threads,
                      std::chrono::milliseconds idle_exit = std::chrono::seconds(5));
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Calls fn(0) … fn(n - 1) on the calling thread and up to `max_concurrency` - 1 of the pool's
  // threads, and returns once every call returned. When the pool's threads are all busy (other
  // callers' batches) the calls left run on the calling thread, so a call never waits for the
  // pool; the concurrency is then lower, never the set of calls. `fn` must be thread-safe and must
  // not throw. The caller's first-write probe is installed on the pool threads for the calls.
  void ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn);

  // Threads alive now (for tests: the pool stays bounded and ends idle threads).
  int threads() const;

 private:
  struct Batch;
  void Loop(std::list<std::thread>::iterator self);
  void ReapExitedLocked(std::vector<std::thread>& to_join);

  const int max_threads_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable work_;
  // One entry per helper slot a caller asked for; a pool thread takes one and runs the batch's
  // loop. A caller removes its entries that no thread took once its own loop is done.
  std::deque<Batch*> queue_;
  std::list<std::thread> threads_;
  std::vector<std::list<std::thread>::iterator> exited_;  // returned from Loop, not yet joined
  int alive_ = 0;
  int idle_ = 0;  // threads waiting for work (counted by the queue's deficit before spawning)
  bool stopping_ = false;
};

struct SlowStartResult {
  int successes = 0;
  // The first failure reported in the failing batch; ok when none failed. "Canceled" when `stop`
  // ended the run: calls not started by then count as skipped (neither success nor failure).
  Status first_error;
};

// Calls `fn` up to `count` times; the first batch has `initial_batch_size` calls and each next
// batch doubles, capped by what remains. `fn` must be thread-safe and must not throw. At most
// `max_concurrency` calls run at once within a batch (on `pool`'s threads and the caller's; with no
// pool, threads are created for the call; the API client's rate limiter is the real bound, the cap
// only keeps thread counts sane at burst 500).
//
// `stop` is checked before every batch and before every call within a batch: once it is
// requested no further call starts (upstream's slowStartBatch gets the same from the context its
// create calls take, whose cancellation fails the batch). Calls already running finish.
SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency = 64, std::stop_token stop = {},
                               WorkerPool* pool = nullptr);

// Calls fn(0) … fn(n - 1) on at most `max_concurrency` threads (the calling thread among them) and
// returns once every call returned: the bounded-parallel loop behind a slow-start batch and behind
// the ReplicaSet controller's pod deletions (upstream runs one goroutine per call; the API
// client's rate limiter is the real bound). `fn` must be thread-safe and must not throw. Runs on
// `pool` when given; without one, threads are created for this call and joined before it returns.
void ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn,
                 WorkerPool* pool = nullptr);

}  // namespace kcm::controller
