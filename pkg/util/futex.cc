#include "pkg/util/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace kcm::futex {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

void Wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
          const std::chrono::steady_clock::time_point* deadline) {
  auto* address = reinterpret_cast<std::uint32_t*>(word);
  if (deadline == nullptr) {
    ::syscall(SYS_futex, address, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, nullptr, nullptr, 0);
    return;
  }
  // FUTEX_WAIT_BITSET takes an absolute time, on CLOCK_MONOTONIC unless FUTEX_CLOCK_REALTIME:
  // the steady clock's, so no deadline drifts by the time between computing and sleeping.
  const auto since_epoch = deadline->time_since_epoch();
  if (since_epoch.count() < 0) return;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  timespec at{};
  at.tv_sec = static_cast<time_t>(seconds.count());
  at.tv_nsec = static_cast<long>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
  ::syscall(SYS_futex, address, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, &at, nullptr,
            FUTEX_BITSET_MATCH_ANY);
}

void Wake(std::atomic<std::uint32_t>* word, int count) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
            count, nullptr, nullptr, 0);
}

}  // namespace kcm::futex
