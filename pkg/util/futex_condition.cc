#include "pkg/util/futex_condition.h"

#include "pkg/util/futex.h"

namespace kcm {

void FutexCondition::Notify(int count) {
  // A waiter that missed the caller's change read sequence_ and counted itself under the mutex
  // before the change was made: this increment ends its sleep (or keeps it from starting), and
  // this load sees it counted.
  sequence_.fetch_add(1, std::memory_order_seq_cst);
  if (waiters_.load(std::memory_order_seq_cst) != 0) futex::Wake(&sequence_, count);
}

void FutexCondition::Sleep(std::unique_lock<std::mutex>& lock,
                           const std::chrono::steady_clock::time_point* deadline) {
  // Read under the mutex: a notifier that changed the state under it bumps sequence_ after this.
  const std::uint32_t seen = sequence_.load(std::memory_order_seq_cst);
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  lock.unlock();
  futex::Wait(&sequence_, seen, deadline);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  lock.lock();
}

bool FutexCondition::WaitUntil(std::unique_lock<std::mutex>& lock,
                               std::chrono::steady_clock::time_point deadline) {
  if (std::chrono::steady_clock::now() >= deadline) return false;
  Sleep(lock, &deadline);
  return std::chrono::steady_clock::now() < deadline;
}

}  // namespace kcm
