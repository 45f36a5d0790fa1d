#include "pkg/util/klog_logger.h"

#include <atomic>

namespace kcm::klog {

bool VEnabled(int level) {
  // -v may change at run time (the /debug/flags/v endpoint stores it the same way).
  return std::atomic_ref<int32_t>(FLAGS_v).load(std::memory_order_relaxed) >= level;
}

}  // namespace kcm::klog
