#include "pkg/controller/slow_start.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "pkg/client/api_errors.h"
#include "pkg/metrics/first_write.h"

namespace kcm::controller {
namespace {

struct BatchOutcome {
  int started = 0;  // calls that ran (the rest were skipped because of stop)
  int failures = 0;
  std::optional<Error> first;
};

// Runs one batch of `size` calls on up to `max_concurrency` threads; a call not yet started when
// `stop` is requested is skipped.
BatchOutcome RunBatch(int size, const std::function<Status()>& fn, int max_concurrency,
                      std::stop_token stop, WorkerPool* pool) {
  std::mutex mu;
  BatchOutcome out;
  ParallelFor(
      size, max_concurrency,
      [&](int) {
        if (stop.stop_requested()) return;
        Status s = fn();
        std::lock_guard lock(mu);
        ++out.started;
        if (!s.ok()) {
          ++out.failures;
          if (!out.first) out.first = s.error();
        }
      },
      pool);
  return out;
}

Error Stopped(int done, int count) {
  return errors::Canceled("slow start stopped after " + std::to_string(done) + " of " +
                          std::to_string(count) + " calls: stop requested");
}

}  // namespace

// One ParallelFor call: its loop state, shared by the caller and the pool threads that took one of
// its helper slots. Lives on the caller's stack; the caller returns only once `outstanding` is 0.
struct WorkerPool::Batch {
  const std::function<void(int)>* fn;
  int n;
  metrics::FirstWriteProbe* probe;
  std::atomic<int> next{0};
  int outstanding = 0;  // helper slots queued or running; guarded by the pool's mutex
  std::condition_variable done;

  void Run() {
    // The pool's threads belong to the caller's reconcile: its first write may be sent from one.
    metrics::ScopedFirstWriteProbe scope(probe);
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) (*fn)(i);
  }
};

WorkerPool::WorkerPool(int max_threads, std::chrono::milliseconds idle_exit)
    : max_threads_(std::max(max_threads, 0)), idle_exit_(idle_exit) {}

WorkerPool::~WorkerPool() {
  std::list<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
    exited_.clear();
  }
  work_.notify_all();
  for (std::thread& t : threads) t.join();
}

int WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return alive_;
}

void WorkerPool::ReapExitedLocked(std::vector<std::thread>& to_join) {
  for (auto it : exited_) {
    to_join.push_back(std::move(*it));
    threads_.erase(it);
  }
  exited_.clear();
}

void WorkerPool::Loop(std::list<std::thread>::iterator self) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (queue_.empty() && !stopping_) {
      ++idle_;
      const bool woken =
          work_.wait_for(lock, idle_exit_, [&] { return !queue_.empty() || stopping_; });
      --idle_;
      if (!woken) break;  // idle for idle_exit_: end, the next caller starts a thread again
    }
    if (queue_.empty()) break;  // stopping
    Batch* batch = queue_.front();
    queue_.pop_front();
    lock.unlock();
    batch->Run();
    lock.lock();
    // Notified under the lock: the caller may destroy the batch as soon as it sees 0.
    if (--batch->outstanding == 0) batch->done.notify_one();
  }
  --alive_;
  // The destructor joins what is still in threads_; otherwise the next caller joins this one.
  if (!stopping_) exited_.push_back(self);
}

void WorkerPool::ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn) {
  Batch batch{&fn, n, metrics::CurrentFirstWriteProbe()};
  const int helpers = std::clamp(n, 1, std::max(max_concurrency, 1)) - 1;
  std::vector<std::thread> to_join;
  const bool queued = helpers > 0 && max_threads_ > 0;
  if (queued) {
    std::lock_guard lock(mu_);
    ReapExitedLocked(to_join);
    for (int i = 0; i < helpers; ++i) queue_.push_back(&batch);
    batch.outstanding = helpers;
    // Waiting threads take what they can; start threads for the rest, up to the bound. Slots no
    // thread takes are run by this caller's own loop and withdrawn below.
    const int wake = std::min(helpers, idle_);
    for (int i = 0; i < wake; ++i) work_.notify_one();
    const int deficit = static_cast<int>(queue_.size()) - idle_;
    for (int i = 0; i < deficit && alive_ < max_threads_; ++i) {
      threads_.emplace_front();
      auto self = threads_.begin();
      try {
        *self = std::thread([this, self] { Loop(self); });
      } catch (const std::system_error&) {
        // No thread to be had (EAGAIN): this caller runs what no thread takes, as when the pool
        // is busy.
        threads_.erase(self);
        break;
      }
      ++alive_;
    }
  }
  for (std::thread& t : to_join) t.join();
  batch.Run();
  if (!queued) return;
  std::unique_lock lock(mu_);
  // Withdraw the slots no thread took: the loop above already ran every call.
  const size_t before = queue_.size();
  std::erase(queue_, &batch);
  batch.outstanding -= static_cast<int>(before - queue_.size());
  batch.done.wait(lock, [&] { return batch.outstanding == 0; });
}

void ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn, WorkerPool* pool) {
  if (pool != nullptr) {
    pool->ParallelFor(n, max_concurrency, fn);
    return;
  }
  // No pool: threads for this call only, joined by the local pool's destructor.
  const int helpers = std::clamp(n, 1, std::max(max_concurrency, 1)) - 1;
  WorkerPool local(helpers);
  local.ParallelFor(n, max_concurrency, fn);
}

SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency, std::stop_token stop, WorkerPool* pool) {
  SlowStartResult result;
  int remaining = count;
  int done = 0;
  for (int batch = std::min(remaining, initial_batch_size); batch > 0;
       batch = std::min(2 * batch, remaining)) {
    if (stop.stop_requested()) {
      result.first_error = Stopped(done, count);
      return result;
    }
    BatchOutcome b = RunBatch(batch, fn, max_concurrency, stop, pool);
    result.successes += b.started - b.failures;
    done += b.started;
    if (b.first) {
      result.first_error = std::move(*b.first);
      return result;
    }
    if (b.started < batch) {
      result.first_error = Stopped(done, count);
      return result;
    }
    remaining -= batch;
  }
  return result;
}

}  // namespace kcm::controller
