#include "pkg/client/rate_limiter.h"

#include <algorithm>
#include <chrono>

#include "pkg/client/api_errors.h"
#include "pkg/client/rest_config.h"

namespace kcm::client {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, Clock& clock)
    : clock_(clock), bucket_(clock, qps, std::max(1, burst)) {}

Status TokenBucketRateLimiter::Wait(std::stop_token stop) {
  const std::chrono::duration<double> wait = bucket_.Reserve();
  if (wait == std::chrono::duration<double>::zero()) return OkStatus();
  // Reserved now, sleep for the deficit: later callers queue behind us.
  const Clock::time_point deadline =
      clock_.Now() + std::chrono::duration_cast<Clock::duration>(wait);
  if (clock_.SleepUntil(deadline, stop)) return OkStatus();
  bucket_.GiveBack();
  return Error::Local(errors::reason::kCanceled, "rate limiter wait canceled");
}

Clock::time_point TokenBucketRateLimiter::Reserve() {
  const std::chrono::duration<double> wait = bucket_.Reserve();
  return clock_.Now() + std::chrono::duration_cast<Clock::duration>(wait);
}

void TokenBucketRateLimiter::Unreserve() {
  bucket_.GiveBack();
}

bool TokenBucketRateLimiter::TryAccept() {
  return bucket_.TryTake();
}

std::unique_ptr<RateLimiter> NewRateLimiter(float qps, int burst, Clock& clock) {
  if (qps < 0) return std::make_unique<NoopRateLimiter>();
  if (qps == 0) {
    qps = kDefaultQPS;
    if (burst <= 0) burst = kDefaultBurst;
  }
  return std::make_unique<TokenBucketRateLimiter>(qps, burst, clock);
}

}  // namespace kcm::client
