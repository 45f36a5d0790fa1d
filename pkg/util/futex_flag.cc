#include "pkg/util/futex_flag.h"

#include "pkg/util/futex.h"

namespace kcm {

void FutexFlag::Set() {
  if (word_.exchange(kSet, std::memory_order_acq_rel) == kSleeping) {
    futex::Wake(&word_, 1);
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
    futex::Wait(&word_, kSleeping);
    seen = word_.load(std::memory_order_acquire);
  }
}

}  // namespace kcm
