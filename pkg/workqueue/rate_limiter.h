// RateLimiter (upstream workqueue.RateLimiter): decides how long a key waits before its next retry.
// Implementations are thread-safe.
#pragma once

#include <string>

#include "pkg/util/clock.h"

namespace kcm::workqueue {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long key should wait now; records one more failure for key.
  virtual Clock::duration When(const std::string& key) = 0;
  // Stops tracking key (its retries succeeded or were abandoned); resets its failures.
  virtual void Forget(const std::string& key) = 0;
  // Failures recorded for key since the last Forget.
  virtual int NumRequeues(const std::string& key) const = 0;
};

}  // namespace kcm::workqueue
