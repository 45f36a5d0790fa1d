#include "pkg/util/futex_flag.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kcm {
namespace {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

long Futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op | FUTEX_PRIVATE_FLAG,
                   value, nullptr, nullptr, 0);
}

}  // namespace

void FutexFlag::Set() {
  if (word_.exchange(kSet, std::memory_order_acq_rel) == kSleeping) {
    Futex(&word_, FUTEX_WAKE, 1);
  }
}

void FutexFlag::Wait() {
  std::uint32_t seen = word_.load(std::memory_order_acquire);
  while (seen != kSet) {
    if (seen == kClear &&
        !word_.compare_exchange_weak(seen, kSleeping, std::memory_order_acquire)) {
      continue;  // raised meanwhile (or a spurious failure): look again
    }
    // Sleeps only while the word still says kSleeping; a Set() in between makes it return at once.
    Futex(&word_, FUTEX_WAIT, kSleeping);
    seen = word_.load(std::memory_order_acquire);
  }
}

}  // namespace kcm
