// SlowStartBatch (spec R7): run `count` calls in batches of 1, 2, 4, … (each batch concurrently),
// stopping after the first batch with a failure, so a create that is going to fail (quota,
// admission) fails once instead of `count` times. Blocks until its calls return; thread-safe.
#pragma once

#include <functional>

#include "pkg/util/result.h"

namespace kcm::controller {

struct SlowStartResult {
  int successes = 0;
  Status first_error;  // the first failure reported in the failing batch; ok when none failed
};

// Calls `fn` up to `count` times; the first batch has `initial_batch_size` calls and each next
// batch doubles, capped by what remains. `fn` must be thread-safe and must not throw. At most
// `max_concurrency` calls run at once within a batch (threads are created per batch; the API
// client's rate limiter is the real bound, the cap only keeps thread counts sane at burst 500).
SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency = 64);

}  // namespace kcm::controller
