// TokenBucket: `burst` tokens, refilled at `qps` per second of Clock time (golang.org/x/time/rate
// semantics). The one bucket under the client's request limiter (client::TokenBucketRateLimiter)
// and the workqueue's overall retry limiter (workqueue::BucketRateLimiter). Thread-safe.
#pragma once

#include <chrono>
#include <mutex>

#include "pkg/util/clock.h"

namespace kcm {

class TokenBucket {
 public:
  // The bucket starts full. Requires qps > 0 and burst >= 1; the clock must outlive the bucket.
  TokenBucket(Clock& clock, double qps, double burst);

  // Takes a token at once, going into debt when none is left (so reservations are served in
  // arrival order), and returns how long until the bucket has refilled it: zero when a token was
  // there.
  std::chrono::duration<double> Reserve();
  // Takes a token only if one is there now.
  bool TryTake();
  // Gives back a reserved token that will not be used (a wait canceled).
  void GiveBack();

 private:
  void AdvanceLocked();

  Clock& clock_;
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;  // May go negative: reservations already handed out ahead of the refill.
  Clock::time_point last_;
};

}  // namespace kcm
