// Clock: the seam for time. Production code takes a Clock& so tests can pass a FakeClock
// (pkg/util/testing/fake_clock.h) and step time by hand. Implementations are thread-safe.
#pragma once

#include <chrono>
#include <stop_token>

namespace kcm {

class Clock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;
  // Monotonic time, for timers and durations.
  virtual time_point Now() const = 0;
  // Wall-clock time, for timestamps written to objects.
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  // Blocks until Now() >= deadline or stop is requested. Returns false if stopped.
  virtual bool SleepUntil(time_point deadline, std::stop_token stop) = 0;

  bool SleepFor(duration d, std::stop_token stop) { return SleepUntil(Now() + d, stop); }
};

class RealClock final : public Clock {
 public:
  time_point Now() const override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point WallNow() const override {
    return std::chrono::system_clock::now();
  }
  bool SleepUntil(time_point deadline, std::stop_token stop) override;

  // A process-wide instance; RealClock has no state, so sharing it is safe.
  static RealClock& Get();
};

}  // namespace kcm
