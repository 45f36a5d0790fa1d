#include "pkg/controller/slow_start.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pkg/client/api_errors.h"

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
  std::atomic<int> next{0};
  std::mutex mu;
  BatchOutcome out;
  auto worker = [&] {
    while (!stop.stop_requested() && next.fetch_add(1) < size) {
      Status s = fn();
      std::lock_guard lock(mu);
      ++out.started;
      if (!s.ok()) {
        ++out.failures;
        if (!out.first) out.first = s.error();
      }
    }
  };
  const int threads = std::clamp(size, 1, std::max(max_concurrency, 1));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<size_t>(threads));
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  }  // jthreads join here
  return out;
}

Error Stopped(int done, int count) {
  return Error::Local("Canceled", "slow start stopped after " + std::to_string(done) + " of " +
                                      std::to_string(count) + " calls: stop requested");
}

}  // namespace

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
