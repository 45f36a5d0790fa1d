// Waiting helpers on a Clock: the jittered exponential backoff the Reflector sleeps between
// ListAndWatch attempts (behaviour 2.1) and WaitForCacheSync (behaviour 4.7). ExponentialBackoff is
// not thread-safe (one owner); WaitForCacheSync may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <vector>

#include "pkg/util/clock.h"

namespace kcm::cache {

// Returns a value in [0, 1). Injected so tests are deterministic.
using RandFunc = std::function<double()>;

// A RandFunc over a private Mersenne twister seeded from std::random_device.
RandFunc NewRandFunc();

// Exponential backoff with jitter that starts over once no backoff was asked for during
// reset_after (upstream's exponential backoff manager).
class ExponentialBackoff {
 public:
  struct Options {
    Clock::duration initial = std::chrono::milliseconds(800);
    Clock::duration cap = std::chrono::seconds(30);
    Clock::duration reset_after = std::chrono::minutes(2);
    double factor = 2.0;
    // Each delay is base × (1 + jitter × rand), base growing by factor up to cap.
    double jitter = 1.0;
  };

  ExponentialBackoff(Options options, Clock& clock, RandFunc rand);

  // The delay to sleep now; advances the sequence.
  Clock::duration Next();

 private:
  Options options_;
  Clock& clock_;
  RandFunc rand_;
  Clock::duration current_;
  bool started_ = false;
  Clock::time_point last_start_{};
};

// Cuts a WaitForCacheSync poll short: Wake() (from any thread, e.g. an informer's store-sync
// listener) ends the current 100 ms sleep, or the next one if none is under way, so the wait
// answers when a cache syncs instead of up to a poll period later. Thread-safe.
class SyncWaker {
 public:
  void Wake();
  // Sleeps d on clock unless woken (since the last Sleep) or stopped. False if stop was requested.
  bool Sleep(Clock& clock, Clock::duration d, std::stop_token stop);

 private:
  std::mutex mu_;
  bool woken_ = false;
  std::stop_source* sleeping_ = nullptr;
};

// Polls every has_synced function right away and then every 100 ms on clock (or when waker, if
// given, is woken) until all return true (→ true) or stop is requested (→ false).
bool WaitForCacheSync(std::stop_token stop, const std::vector<std::function<bool()>>& has_synced,
                      Clock& clock = RealClock::Get(), SyncWaker* waker = nullptr);

}  // namespace kcm::cache
