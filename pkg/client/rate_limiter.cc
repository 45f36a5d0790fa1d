#include "pkg/client/rate_limiter.h"

#include <algorithm>
#include <chrono>

#include "pkg/client/api_errors.h"
#include "pkg/client/rest_config.h"

namespace kcm::client {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(std::max(1, burst)), clock_(clock), tokens_(burst_), last_(clock.Now()) {}

void TokenBucketRateLimiter::AdvanceLocked(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

Status TokenBucketRateLimiter::Wait(std::stop_token stop) {
  Clock::time_point deadline;
  {
    std::lock_guard lock(mu_);
    AdvanceLocked(clock_.Now());
    tokens_ -= 1;
    if (tokens_ >= 0) return OkStatus();
    // Reserve now, sleep for the deficit: later callers queue behind us.
    deadline = last_ + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(-tokens_ / qps_));
  }
  if (clock_.SleepUntil(deadline, stop)) return OkStatus();
  {
    std::lock_guard lock(mu_);
    AdvanceLocked(clock_.Now());
    tokens_ = std::min(burst_, tokens_ + 1);
  }
  return Error::Local(errors::reason::kCanceled, "rate limiter wait canceled");
}

bool TokenBucketRateLimiter::TryAccept() {
  std::lock_guard lock(mu_);
  AdvanceLocked(clock_.Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
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
