#include "pkg/util/testing/fake_clock.h"

namespace kcm {

FakeClock::FakeClock()
    : now_(std::chrono::steady_clock::time_point{} + std::chrono::hours(1)),
      wall_base_(std::chrono::system_clock::time_point{} + std::chrono::seconds(1700000000)),
      base_(now_) {}

Clock::time_point FakeClock::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

std::chrono::system_clock::time_point FakeClock::WallNow() const {
  std::lock_guard lock(mu_);
  return wall_base_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(now_ - base_);
}

bool FakeClock::SleepUntil(time_point deadline, std::stop_token stop) {
  std::unique_lock lock(mu_);
  ++waiters_;
  cv_.notify_all();
  bool reached = cv_.wait(lock, stop, [&] { return now_ >= deadline; });
  --waiters_;
  return reached;
}

void FakeClock::Step(duration d) {
  std::lock_guard lock(mu_);
  now_ += d;
  cv_.notify_all();
}

void FakeClock::SetTime(time_point t) {
  std::lock_guard lock(mu_);
  now_ = t;
  cv_.notify_all();
}

int FakeClock::Waiters() const {
  std::lock_guard lock(mu_);
  return waiters_;
}

bool FakeClock::WaitForWaiters(int n) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return waiters_ >= n; });
}

}  // namespace kcm
