#include "pkg/workqueue/default_rate_limiters.h"

#include <algorithm>
#include <cmath>

namespace kcm::workqueue {

ItemExponentialFailureRateLimiter::ItemExponentialFailureRateLimiter(Clock::duration base_delay,
                                                                     Clock::duration max_delay)
    : base_delay_(base_delay), max_delay_(max_delay) {}

Clock::duration ItemExponentialFailureRateLimiter::When(const std::string& key) {
  int exp;
  {
    std::lock_guard lock(mu_);
    exp = failures_[key]++;
  }
  // In floating point so a long failure streak saturates at max_delay instead of overflowing.
  double backoff = static_cast<double>(base_delay_.count()) * std::pow(2.0, exp);
  if (backoff >= static_cast<double>(max_delay_.count())) return max_delay_;
  return Clock::duration(static_cast<Clock::duration::rep>(backoff));
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

ItemFastSlowRateLimiter::ItemFastSlowRateLimiter(Clock::duration fast_delay,
                                                 Clock::duration slow_delay, int max_fast_attempts)
    : fast_delay_(fast_delay), slow_delay_(slow_delay), max_fast_attempts_(max_fast_attempts) {}

Clock::duration ItemFastSlowRateLimiter::When(const std::string& key) {
  std::lock_guard lock(mu_);
  return ++failures_[key] <= max_fast_attempts_ ? fast_delay_ : slow_delay_;
}

void ItemFastSlowRateLimiter::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int ItemFastSlowRateLimiter::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(Clock& clock, double qps, int burst)
    : bucket_(clock, qps, burst) {}

Clock::duration BucketRateLimiter::When(const std::string& /*key*/) {
  // Rounded rather than truncated, so one token's deficit at 10 qps is exactly 100 ms.
  return std::chrono::round<Clock::duration>(bucket_.Reserve());
}

void BucketRateLimiter::Forget(const std::string& /*key*/) {}

int BucketRateLimiter::NumRequeues(const std::string& /*key*/) const {
  return 0;
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

Clock::duration MaxOfRateLimiter::When(const std::string& key) {
  Clock::duration longest = Clock::duration::zero();
  // Every limiter is asked, so each records the failure (and the bucket spends its token).
  for (const auto& limiter : limiters_) longest = std::max(longest, limiter->When(key));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& key) {
  for (const auto& limiter : limiters_) limiter->Forget(key);
}

int MaxOfRateLimiter::NumRequeues(const std::string& key) const {
  int most = 0;
  for (const auto& limiter : limiters_) most = std::max(most, limiter->NumRequeues(key));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace kcm::workqueue
