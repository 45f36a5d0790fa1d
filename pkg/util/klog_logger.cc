#include "pkg/util/klog_logger.h"

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace kcm::klog {
namespace {

// glog's VLOG_IS_ON keeps a SiteFlag per call site (a static inside the macro) which glog links
// into its list, so that a later SetVLOGLevel re-points it. Logger::V is a function called from
// many files, so the sites are kept per source file here, for the life of the process (glog
// holds pointers to them): one per file that ever asked, a few dozen.
class FileSites {
 public:
  // The verbosity that applies to `file`: FLAGS_v itself, or its --vmodule pattern's level.
  int32_t* Level(const char* file) {
    {
      std::shared_lock lock(mu_);
      auto it = sites_.find(file);
      if (it != sites_.end()) return it->second.level;
    }
    std::unique_lock lock(mu_);
    auto [it, inserted] = sites_.try_emplace(file, google::SiteFlag{nullptr, nullptr, 0, nullptr});
    if (inserted) google::InitVLOG3__(&it->second, &FLAGS_v, file, 0);
    return it->second.level;
  }

  std::atomic<bool> any_pattern{false};

 private:
  std::shared_mutex mu_;
  // Node-based: a SiteFlag never moves once glog has linked it. Keys view __builtin_FILE's
  // literals, which live as long as the program.
  std::unordered_map<std::string_view, google::SiteFlag> sites_;
};

FileSites& Sites() {
  static FileSites sites;
  return sites;
}

}  // namespace

bool VEnabled(int level, const char* file) {
  // -v may change at run time (the /debug/flags/v endpoint stores it the same way).
  int32_t* applies = &FLAGS_v;
  if (Sites().any_pattern.load(std::memory_order_acquire)) applies = Sites().Level(file);
  return std::atomic_ref<int32_t>(*applies).load(std::memory_order_relaxed) >= level;
}

void SetVModule(const std::string& pattern, int level) {
  google::SetVLOGLevel(pattern.c_str(), level);
  Sites().any_pattern.store(true, std::memory_order_release);
}

}  // namespace kcm::klog
