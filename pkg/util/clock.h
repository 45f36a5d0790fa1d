// Clock: the seam for time. Production code takes a Clock& so tests can pass a FakeClock and step
// time by hand. Implementations are thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
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
