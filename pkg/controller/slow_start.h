// SlowStartBatch (upstream slowStartBatch): run `count` calls in batches of 1, 2, 4, …, each
// batch's calls at once, stopping after the first batch with a failure, so a create that is going
// to fail (quota, admission) fails once instead of `count` times. A batch is one call of
// `run_batch` on the caller's thread, which sends its writes as requests in flight
// (PodControlInterface::CreatePodsBatch, client::RestClient::DoAll): no thread per write
// (docs/design/client-transport.md, "Rate limiting without threads").
#pragma once

#include <functional>
#include <stop_token>
#include <vector>

#include "pkg/controller/write_outcome.h"
#include "pkg/util/result.h"

namespace kcm::controller {

struct SlowStartResult {
  int successes = 0;
  // The first failure (in call order) of the failing batch; ok when none failed. "Canceled" when
  // `stop` ended the run: calls not sent by then count as skipped (neither success nor failure).
  Status first_error;
};

// Runs one batch of `size` calls at once and returns once all of them ended, one outcome each;
// a call not sent because the stop was requested is `skipped`.
using SlowStartBatchFn = std::function<std::vector<WriteOutcome>(int size)>;

// Runs up to `count` calls; the first batch has `initial_batch_size` calls and each next batch
// doubles, capped by what remains; the next batch starts only once the whole batch ended.
//
// `stop` is checked before every batch; within a batch `run_batch` leaves the calls not yet sent
// when it is requested unsent (upstream's slowStartBatch gets the same from the context its
// create calls take, whose cancellation fails the batch). Calls already sent finish.
SlowStartResult SlowStartBatch(int count, int initial_batch_size, const SlowStartBatchFn& run_batch,
                               std::stop_token stop = {});

}  // namespace kcm::controller
