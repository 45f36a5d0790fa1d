// SlowStartBatch (upstream slowStartBatch): run `count` calls in batches of 1, 2, 4, … (each batch
// concurrently), stopping after the first batch with a failure, so a create that is going to fail
// (quota, admission) fails once instead of `count` times. Blocks until its calls return;
// thread-safe.
#pragma once

#include <functional>
#include <stop_token>

#include "pkg/util/result.h"

namespace kcm::controller {

struct SlowStartResult {
  int successes = 0;
  // The first failure reported in the failing batch; ok when none failed. "Canceled" when `stop`
  // ended the run: calls not started by then count as skipped (neither success nor failure).
  Status first_error;
};

// Calls `fn` up to `count` times; the first batch has `initial_batch_size` calls and each next
// batch doubles, capped by what remains. `fn` must be thread-safe and must not throw. At most
// `max_concurrency` calls run at once within a batch (threads are created per batch; the API
// client's rate limiter is the real bound, the cap only keeps thread counts sane at burst 500).
//
// `stop` is checked before every batch and before every call within a batch: once it is
// requested no further call starts (upstream's slowStartBatch gets the same from the context its
// create calls take, whose cancellation fails the batch). Calls already running finish.
SlowStartResult SlowStartBatch(int count, int initial_batch_size, const std::function<Status()>& fn,
                               int max_concurrency = 64, std::stop_token stop = {});

// Calls fn(0) … fn(n - 1) on at most `max_concurrency` threads (the calling thread among them) and
// returns once every call returned: the bounded-parallel loop behind a slow-start batch and behind
// the ReplicaSet controller's pod deletions (upstream runs one goroutine per call; the API
// client's rate limiter is the real bound). `fn` must be thread-safe and must not throw.
void ParallelFor(int n, int max_concurrency, const std::function<void(int)>& fn);

}  // namespace kcm::controller
