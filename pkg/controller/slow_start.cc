#include "pkg/controller/slow_start.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
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
                      std::stop_token stop) {
  std::mutex mu;
  BatchOutcome out;
  ParallelFor(size, max_concurrency, [&](int) {
    if (stop.stop_requested()) return;
    Status s = fn();
    std::lock_guard lock(mu);
    ++out.started;
    if (!s.ok()) {
      ++out.failures;
      if (!out.first) out.first = s.error();
    }
  });
  return out;
}

Error Stopped(int done, int count) {
  return errors::Canceled("slow start stopped after " + std::to_string(done) + " of " +
                          std::to_string(count) + " calls: stop requested");
}

}  // namespace

void ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  // The pool's threads belong to the caller's reconcile: its first write may be sent from one.
  metrics::FirstWriteProbe* probe = metrics::CurrentFirstWriteProbe();
  auto worker = [&] {
    metrics::ScopedFirstWriteProbe scope(probe);
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  const int threads = std::clamp(n, 1, std::max(max_concurrency, 1));
  std::vector<std::jthread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  // The pool's jthreads join on return.
}

SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency, std::stop_token stop) {
  SlowStartResult result;
  int remaining = count;
  int done = 0;
  for (int batch = std::min(remaining, initial_batch_size); batch > 0;
       batch = std::min(2 * batch, remaining)) {
    if (stop.stop_requested()) {
      result.first_error = Stopped(done, count);
      return result;
    }
    BatchOutcome b = RunBatch(batch, fn, max_concurrency, stop);
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
