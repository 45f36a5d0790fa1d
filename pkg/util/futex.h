// The two futex(2) operations the blocking hand-offs of this repository are built on (FutexFlag,
// FutexCondition): private to one process, on a 32-bit word inside an std::atomic.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kcm::futex {

// Sleeps while *word holds `expected`, until a Wake, a signal or, if given, `deadline` (the
// steady clock's, which is CLOCK_MONOTONIC). Returns at once when *word no longer holds
// `expected`; callers re-check their condition whatever the reason it returned.
void Wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
          const std::chrono::steady_clock::time_point* deadline = nullptr);
// Wakes up to `count` threads sleeping in Wait on `word`.
void Wake(std::atomic<std::uint32_t>* word, int count);

}  // namespace kcm::futex
