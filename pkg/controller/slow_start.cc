#include "pkg/controller/slow_start.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace kcm::controller {
namespace {

// Runs one batch of `size` calls on up to `max_concurrency` threads; returns the failures'
// count and the first failure.
std::pair<int, std::optional<Error>> RunBatch(int size, const std::function<Status()>& fn,
                                              int max_concurrency) {
  std::atomic<int> next{0};
  std::mutex mu;
  int failures = 0;
  std::optional<Error> first;
  auto worker = [&] {
    while (next.fetch_add(1) < size) {
      Status s = fn();
      if (!s.ok()) {
        std::lock_guard lock(mu);
        ++failures;
        if (!first) first = s.error();
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
  return {failures, std::move(first)};
}

}  // namespace

SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency) {
  SlowStartResult result;
  int remaining = count;
  for (int batch = std::min(remaining, initial_batch_size); batch > 0;
       batch = std::min(2 * batch, remaining)) {
    auto [failures, first] = RunBatch(batch, fn, max_concurrency);
    result.successes += batch - failures;
    if (first) {
      result.first_error = std::move(*first);
      return result;
    }
    remaining -= batch;
  }
  return result;
}

}  // namespace kcm::controller
