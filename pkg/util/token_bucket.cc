#include "pkg/util/token_bucket.h"

#include <algorithm>

namespace kcm {

TokenBucket::TokenBucket(Clock& clock, double qps, double burst)
    : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_(clock.Now()) {}

void TokenBucket::AdvanceLocked() {
  const Clock::time_point now = clock_.Now();
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

std::chrono::duration<double> TokenBucket::Reserve() {
  std::lock_guard lock(mu_);
  AdvanceLocked();
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::duration<double>::zero();
  return std::chrono::duration<double>(-tokens_ / qps_);
}

bool TokenBucket::TryTake() {
  std::lock_guard lock(mu_);
  AdvanceLocked();
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void TokenBucket::GiveBack() {
  std::lock_guard lock(mu_);
  AdvanceLocked();
  tokens_ = std::min(burst_, tokens_ + 1);
}

}  // namespace kcm
