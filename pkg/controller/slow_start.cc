#include "pkg/controller/slow_start.h"

#include <algorithm>
#include <optional>
#include <string>

#include "pkg/client/api_errors.h"

namespace kcm::controller {
namespace {

Error Stopped(int done, int count) {
  return errors::Canceled("slow start stopped after " + std::to_string(done) + " of " +
                          std::to_string(count) + " calls: stop requested");
}

}  // namespace

SlowStartResult SlowStartBatch(int count, int initial_batch_size, const SlowStartBatchFn& run_batch,
                               std::stop_token stop) {
  SlowStartResult result;
  int remaining = count;
  int done = 0;
  for (int batch = std::min(remaining, initial_batch_size); batch > 0;
       batch = std::min(2 * batch, remaining)) {
    if (stop.stop_requested()) {
      result.first_error = Stopped(done, count);
      return result;
    }
    const std::vector<WriteOutcome> outcomes = run_batch(batch);
    int sent = 0;
    std::optional<Error> first;
    for (const WriteOutcome& o : outcomes) {
      if (o.skipped) continue;
      ++sent;
      if (o.status.ok()) {
        ++result.successes;
      } else if (!first) {
        first = o.status.error();
      }
    }
    done += sent;
    if (first) {
      result.first_error = std::move(*first);
      return result;
    }
    // Fewer sent than asked for: the stop was requested within the batch.
    if (sent < batch) {
      result.first_error = Stopped(done, count);
      return result;
    }
    remaining -= batch;
  }
  return result;
}

}  // namespace kcm::controller
