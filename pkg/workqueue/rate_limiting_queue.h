// RateLimitingQueue (upstream workqueue.RateLimitingInterface): the queue controllers use; a
// DelayingQueue whose retries are spaced by a RateLimiter. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "pkg/workqueue/delaying_queue.h"
#include "pkg/workqueue/rate_limiter.h"

namespace kcm::workqueue {

struct RateLimitingQueueConfig {
  // Value of the `name` metric label; empty records no metrics (as upstream).
  std::string name;
  // Not owned; must outlive the queue. Null means RealClock::Get().
  Clock* clock = nullptr;
  // Null means DefaultControllerRateLimiter(*clock).
  std::unique_ptr<RateLimiter> rate_limiter;
};

class RateLimitingQueue final : public DelayingQueue {
 public:
  explicit RateLimitingQueue(RateLimitingQueueConfig config = {});

  // Adds key after the delay the rate limiter grants it (one more failure recorded for key).
  void AddRateLimited(const std::string& key);
  // Clears the rate limiter's failure history for key. Call it when key was processed
  // successfully; it does not remove key from the queue.
  void Forget(const std::string& key);
  // How many times key has been rate-limited since its last Forget.
  int NumRequeues(const std::string& key) const;

 private:
  const std::unique_ptr<RateLimiter> rate_limiter_;
};

}  // namespace kcm::workqueue
