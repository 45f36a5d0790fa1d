// FutexFlag: a one-shot flag one thread raises and another blocks on until it is raised: how the
// transport's loop thread hands a finished request back to its blocked caller
// (docs/design/client-transport.md, "The loop"). A futex word, not std::atomic::wait, whose GCC 12
// libstdc++ implementation spins through sched_yield before it sleeps (measured in that document).
#pragma once

#include <atomic>
#include <cstdint>

namespace kcm {

class FutexFlag {
 public:
  FutexFlag() = default;
  FutexFlag(const FutexFlag&) = delete;
  FutexFlag& operator=(const FutexFlag&) = delete;

  // Raises the flag and wakes the waiter, if one sleeps: a system call only then. Everything
  // written before Set() is visible to the thread that Wait() returns in. Call at most once.
  void Set();
  // Returns once the flag is raised; at once if it already is.
  void Wait();
  bool IsSet() const { return word_.load(std::memory_order_acquire) == kSet; }

 private:
  static constexpr std::uint32_t kClear = 0;
  static constexpr std::uint32_t kSet = 1;
  static constexpr std::uint32_t kSleeping = 2;  // clear, with a waiter in (or entering) FUTEX_WAIT
  std::atomic<std::uint32_t> word_{kClear};
};

}  // namespace kcm
