#include "pkg/util/clock.h"

#include <condition_variable>
#include <mutex>

namespace kcm {

bool RealClock::SleepUntil(time_point deadline, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_until(lock, stop, deadline, [] { return false; }) && !stop.stop_requested();
}

RealClock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

}  // namespace kcm
