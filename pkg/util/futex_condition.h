// FutexCondition: a condition variable for the hand-offs every watch event crosses (the loop to a
// reflector's ByteChannel, the reflector to its DeltaFIFO's consumer, a handler to a workqueue's
// worker), used as std::condition_variable is: the state it guards changes under the caller's
// mutex, the waiter re-checks it under that mutex.
//
// Why not std::condition_variable: glibc's pthread_cond_wait takes the mutex back after a wake-up
// marked as contended, whether or not another thread wants it, so the woken thread's next unlock
// makes a FUTEX_WAKE system call for nobody. Over the 300 × 10 rollout
// (`PERF_EVENT=syscalls:sys_enter_futex bench/deployment/scale_bench.sh`) that wake followed every
// sleep on these hand-offs, a quarter of the daemon's futex calls; here the woken thread takes
// the mutex like any other locker, and the rollout's futex calls a created pod fell by 29 %
// (docs/benchmarks.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace kcm {

class FutexCondition {
 public:
  FutexCondition() = default;
  FutexCondition(const FutexCondition&) = delete;
  FutexCondition& operator=(const FutexCondition&) = delete;

  // Wake one (all) of the threads in Wait. Call after changing the state under the mutex; best
  // after unlocking it, so the woken thread does not block straight on it. A system call only
  // when a thread is in Wait.
  void NotifyOne() { Notify(1); }
  void NotifyAll() { Notify(kAll); }

  // Unlocks `lock`, sleeps until a Notify that comes after this call took its place (or
  // spuriously), and locks it again. `lock` must hold the mutex under which the state changes.
  void Wait(std::unique_lock<std::mutex>& lock) { Sleep(lock, nullptr); }
  template <typename Predicate>
  void Wait(std::unique_lock<std::mutex>& lock, Predicate ready) {
    while (!ready()) Sleep(lock, nullptr);
  }
  // As Wait, or until `deadline`: false once it has passed (the caller re-checks its state).
  bool WaitUntil(std::unique_lock<std::mutex>& lock,
                 std::chrono::steady_clock::time_point deadline);

 private:
  static constexpr int kAll = 1 << 30;
  void Notify(int count);
  void Sleep(std::unique_lock<std::mutex>& lock,
             const std::chrono::steady_clock::time_point* deadline);

  // Bumped by every Notify: a waiter sleeps only while it holds the value read under the mutex,
  // so a Notify between its unlock and its sleep is never lost.
  std::atomic<std::uint32_t> sequence_{0};
  std::atomic<std::uint32_t> waiters_{0};  // threads between taking their place and waking
};

}  // namespace kcm
