// FakeClock: the Clock for tests (k8s.io/utils/clock/testing's FakeClock), in the test-only
// library kcm_util_testing. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

#include "pkg/util/clock.h"

namespace kcm {

// FakeClock: time moves only when a test calls Step or SetTime. Sleepers wake when their deadline
// is reached. HasWaiters lets a test wait until a thread is parked on the clock.
class FakeClock final : public Clock {
 public:
  FakeClock();
  time_point Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  bool SleepUntil(time_point deadline, std::stop_token stop) override;

  void Step(duration d);
  void SetTime(time_point t);
  int Waiters() const;
  // Blocks (in real time, up to 10 s) until at least n threads sleep on this clock.
  bool WaitForWaiters(int n) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  time_point now_;
  std::chrono::system_clock::time_point wall_base_;
  time_point base_;
  int waiters_ = 0;
};

}  // namespace kcm
