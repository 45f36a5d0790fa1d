#include "pkg/cache/wait.h"

#include <algorithm>
#include <memory>
#include <random>

namespace kcm::cache {

RandFunc NewRandFunc() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  auto dist = std::make_shared<std::uniform_real_distribution<double>>(0.0, 1.0);
  // The engine is owned by this one function object; callers that share it must serialize.
  return [engine, dist] { return (*dist)(*engine); };
}

ExponentialBackoff::ExponentialBackoff(Options options, Clock& clock, RandFunc rand)
    : options_(options), clock_(clock), rand_(std::move(rand)), current_(options.initial) {}

Clock::duration ExponentialBackoff::Next() {
  const Clock::time_point now = clock_.Now();
  // A long healthy run since the last failure means the next failure starts from the beginning.
  if (!started_ || now - last_start_ > options_.reset_after) {
    current_ = options_.initial;
  }
  started_ = true;
  last_start_ = now;
  const Clock::duration base = current_;
  current_ = std::min(std::chrono::duration_cast<Clock::duration>(current_ * options_.factor),
                      options_.cap);
  return base + std::chrono::duration_cast<Clock::duration>(base * (options_.jitter * rand_()));
}

void SyncWaker::Wake() {
  std::lock_guard lock(mu_);
  woken_ = true;
  if (sleeping_ != nullptr) sleeping_->request_stop();
}

bool SyncWaker::Sleep(Clock& clock, Clock::duration d, std::stop_token stop) {
  std::stop_source round;
  {
    std::lock_guard lock(mu_);
    if (woken_) {
      woken_ = false;
      return !stop.stop_requested();
    }
    sleeping_ = &round;
  }
  {
    std::stop_callback forward(stop, [&round] { round.request_stop(); });
    clock.SleepFor(d, round.get_token());
  }
  std::lock_guard lock(mu_);
  sleeping_ = nullptr;
  woken_ = false;  // this sleep was the one woken, or the poll period ran out: the caller checks
  return !stop.stop_requested();
}

bool WaitForCacheSync(std::stop_token stop, const std::vector<std::function<bool()>>& has_synced,
                      Clock& clock, SyncWaker* waker) {
  while (true) {
    // Checked before the stop, as upstream's immediate poll does: caches that have synced are
    // reported synced even if the caller is already stopping (a factory's per-type results).
    if (std::all_of(has_synced.begin(), has_synced.end(), [](const auto& f) { return f(); })) {
      return true;
    }
    if (stop.stop_requested()) {
      return false;
    }
    // Upstream's syncedPollPeriod; a waker ends it early when a cache may have synced.
    const bool slept = waker != nullptr ? waker->Sleep(clock, std::chrono::milliseconds(100), stop)
                                        : clock.SleepFor(std::chrono::milliseconds(100), stop);
    if (!slept) {
      return false;
    }
  }
}

}  // namespace kcm::cache
