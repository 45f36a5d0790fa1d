#include "pkg/workqueue/rate_limiting_queue.h"

#include "pkg/workqueue/default_rate_limiters.h"

namespace kcm::workqueue {
namespace {

Clock& ClockOrReal(Clock* clock) {
  return clock != nullptr ? *clock : RealClock::Get();
}

}  // namespace

RateLimitingQueue::RateLimitingQueue(RateLimitingQueueConfig config)
    : DelayingQueue(QueueConfig{config.name, config.clock}),
      rate_limiter_(config.rate_limiter != nullptr
                        ? std::move(config.rate_limiter)
                        : DefaultControllerRateLimiter(ClockOrReal(config.clock))) {}

void RateLimitingQueue::AddRateLimited(const std::string& key) {
  AddAfter(key, rate_limiter_->When(key));
}

void RateLimitingQueue::Forget(const std::string& key) {
  rate_limiter_->Forget(key);
}

int RateLimitingQueue::NumRequeues(const std::string& key) const {
  return rate_limiter_->NumRequeues(key);
}

}  // namespace kcm::workqueue
