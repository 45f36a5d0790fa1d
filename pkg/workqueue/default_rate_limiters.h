// The stock rate limiters of upstream default_rate_limiters.go: per-item exponential and fast/slow
// backoff, an overall token bucket, the max of several, and the controllers' default combination.
// All are thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/util/clock.h"
#include "pkg/util/token_bucket.h"
#include "pkg/workqueue/rate_limiter.h"

namespace kcm::workqueue {

// base × 2^failures, capped at max_delay.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Clock::duration base_delay, Clock::duration max_delay);
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const Clock::duration base_delay_;
  const Clock::duration max_delay_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

// fast_delay for the first max_fast_attempts failures of a key, slow_delay after that.
class ItemFastSlowRateLimiter final : public RateLimiter {
 public:
  ItemFastSlowRateLimiter(Clock::duration fast_delay, Clock::duration slow_delay,
                          int max_fast_attempts);
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const Clock::duration fast_delay_;
  const Clock::duration slow_delay_;
  const int max_fast_attempts_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> failures_;
};

// A TokenBucket over all keys: each When takes a token, and a deficit becomes a delay.
// Forget and NumRequeues do not apply to it. Requires qps > 0 and burst >= 1.
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(Clock& clock, double qps, int burst);
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  TokenBucket bucket_;
};

// The longest delay of its limiters; Forget forgets in all; NumRequeues is the largest count.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  Clock::duration When(const std::string& key) override;
  void Forget(const std::string& key) override;
  int NumRequeues(const std::string& key) const override;

 private:
  const std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// What controllers use: max(per-item exponential 5 ms × 2^failures capped at 1000 s,
// token bucket 10 qps with burst 100). The clock drives the bucket and must outlive the limiter.
std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock);

}  // namespace kcm::workqueue
