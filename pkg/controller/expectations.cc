#include "pkg/controller/expectations.h"

#include "pkg/util/klog.h"

namespace kcm::controller {

std::optional<ControlleeExpectations> ControllerExpectations::GetExpectations(
    std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(std::string(key));
  if (it == records_.end()) return std::nullopt;
  return it->second;
}

bool ControllerExpectations::IsExpired(const ControlleeExpectations& exp) const {
  return clock_.Now() - exp.timestamp > kExpectationsTimeout;
}

bool ControllerExpectations::SatisfiedExpectations(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = records_.find(std::string(key));
  if (it == records_.end()) {
    // A controller that never set expectations (new, or restarted) has nothing to wait for.
    KLOG_V_INFOS(4, "Controller has no store", "controller", key);
    return true;
  }
  const ControlleeExpectations& exp = it->second;
  if (exp.Fulfilled()) {
    KLOG_V_INFOS(4, "Controller expectations fulfilled", "controller", key);
    return true;
  }
  if (IsExpired(exp)) {
    KLOG_V_INFOS(4, "Controller expectations expired", "controller", key, "add", exp.add, "del",
                 exp.del);
    return true;
  }
  KLOG_V_INFOS(4, "Controller still waiting on expectations", "controller", key, "add", exp.add,
               "del", exp.del);
  return false;
}

void ControllerExpectations::SetExpectations(std::string_view key, int64_t add, int64_t del) {
  std::lock_guard lock(mu_);
  records_.insert_or_assign(std::string(key), ControlleeExpectations{add, del, clock_.Now()});
}

void ControllerExpectations::LowerExpectations(std::string_view key, int64_t add, int64_t del) {
  RaiseExpectations(key, -add, -del);
}

void ControllerExpectations::RaiseExpectations(std::string_view key, int64_t add, int64_t del) {
  std::lock_guard lock(mu_);
  auto it = records_.find(std::string(key));
  if (it == records_.end()) return;
  it->second.add += add;
  it->second.del += del;
}

void ControllerExpectations::DeleteExpectations(std::string_view key) {
  std::lock_guard lock(mu_);
  records_.erase(std::string(key));
}

void UIDTrackingControllerExpectations::ExpectDeletions(
    std::string_view key, const std::vector<std::string>& deleted_keys) {
  std::set<std::string, std::less<>> expected(deleted_keys.begin(), deleted_keys.end());
  std::lock_guard lock(mu_);
  auto& slot = uids_[std::string(key)];
  if (!slot.empty()) {
    KLOG_ERRORS("", "Clobbering existing UID set", "controller", key, "pendingDeletions",
                slot.size());
  }
  const auto count = static_cast<int64_t>(expected.size());
  slot = std::move(expected);
  expectations_.ExpectDeletions(key, count);
}

void UIDTrackingControllerExpectations::DeletionObserved(std::string_view key,
                                                         std::string_view deleted_key) {
  std::lock_guard lock(mu_);
  auto it = uids_.find(std::string(key));
  if (it == uids_.end()) return;
  auto pod = it->second.find(deleted_key);
  if (pod == it->second.end()) return;
  KLOG_V_INFOS(4, "Controller received delete for pod", "controller", key, "pod", deleted_key);
  expectations_.DeletionObserved(key);
  it->second.erase(pod);
}

std::set<std::string> UIDTrackingControllerExpectations::GetUIDs(std::string_view key) const {
  std::lock_guard lock(mu_);
  auto it = uids_.find(std::string(key));
  if (it == uids_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

void UIDTrackingControllerExpectations::DeleteExpectations(std::string_view key) {
  std::lock_guard lock(mu_);
  expectations_.DeleteExpectations(key);
  uids_.erase(std::string(key));
}

}  // namespace kcm::controller
