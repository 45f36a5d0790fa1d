// Client-side rate limiting of API requests (flowcontrol.RateLimiter, behaviour 1.4): a token
// bucket of `qps` tokens per second holding at most `burst`. All members are thread-safe.
#pragma once

#include <memory>
#include <stop_token>

#include "pkg/util/clock.h"
#include "pkg/util/result.h"
#include "pkg/util/token_bucket.h"

namespace kcm::client {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Blocks until a token is available. Returns an error (reason "Canceled") if stop is requested
  // first; the reserved token is then given back.
  virtual Status Wait(std::stop_token stop) = 0;
  // Takes a token if one is available now.
  virtual bool TryAccept() = 0;
  // Takes a token now without waiting and returns when it may be used: at once when one was
  // there, else when the bucket has refilled it, in arrival order with Wait's reservations
  // (golang.org/x/time/rate's Reserve). The caller sleeps until then itself (a batch reserves all
  // of its requests' tokens at once, as upstream's goroutines each in Wait do); a reservation
  // that will not be used is handed back with Unreserve before its time.
  virtual Clock::time_point Reserve() = 0;
  virtual void Unreserve() = 0;
};

// A waiter reserves its token from the TokenBucket at once and sleeps until the bucket would
// have refilled it, so waiters are served in arrival order.
class TokenBucketRateLimiter final : public RateLimiter {
 public:
  TokenBucketRateLimiter(double qps, int burst, Clock& clock);
  Status Wait(std::stop_token stop) override;
  bool TryAccept() override;
  Clock::time_point Reserve() override;
  void Unreserve() override;

 private:
  Clock& clock_;
  TokenBucket bucket_;
};

// qps < 0: never waits.
class NoopRateLimiter final : public RateLimiter {
 public:
  Status Wait(std::stop_token) override { return OkStatus(); }
  bool TryAccept() override { return true; }
  Clock::time_point Reserve() override { return Clock::time_point::min(); }
  void Unreserve() override {}
};

// The limiter a client built from (qps, burst) uses: none for qps < 0, the client-go defaults
// (5, 10) for qps == 0, else a token bucket (burst < 1 is raised to 1).
std::unique_ptr<RateLimiter> NewRateLimiter(float qps, int burst, Clock& clock);

}  // namespace kcm::client
