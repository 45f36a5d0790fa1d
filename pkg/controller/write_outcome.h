// WriteOutcome: what became of one write of a batch sent at once (a slow-start batch's pod
// create, one of a sync's pod deletes): sent, with its result, or skipped because the stop was
// requested before it was sent (upstream's slowStartBatch sees the same as a create whose
// context was cancelled before the request).
#pragma once

#include "pkg/util/result.h"

namespace kcm::controller {

struct WriteOutcome {
  // The write's result; for a skipped write, why it was not sent ("Canceled").
  Status status;
  // Never sent: the stop (the worker's, or the write fence) was requested first.
  bool skipped = false;
};

}  // namespace kcm::controller
