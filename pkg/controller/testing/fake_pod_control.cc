#include "pkg/controller/testing/fake_pod_control.h"

#include <utility>

namespace kcm::controller::testing {

Status FakePodControl::CreatePods(std::string_view /*ns*/, const api::PodTemplate& pod_template,
                                  const api::Object& /*controller_object*/,
                                  const api::OwnerReference& controller_ref) {
  std::function<Status()> hook;
  {
    std::lock_guard lock(mu_);
    ++create_call_count_;
    if (create_limit_ > 0 && create_call_count_ > create_limit_) {
      return Error::Local("CreateLimit", "not creating pod, limit " +
                                             std::to_string(create_limit_) + " already reached");
    }
    templates_.push_back(pod_template);
    controller_refs_.push_back(controller_ref);
    if (err_) return *err_;
    hook = create_hook_;
  }
  return hook ? hook() : OkStatus();
}

Status FakePodControl::DeletePod(std::string_view /*ns*/, std::string_view name,
                                 const api::Object& /*controller_object*/) {
  std::lock_guard lock(mu_);
  delete_pod_names_.emplace_back(name);
  if (err_) return *err_;
  return OkStatus();
}

Status FakePodControl::PatchPod(std::string_view ns, std::string_view name,
                                const std::string& patch) {
  std::lock_guard lock(mu_);
  patches_.push_back(Patch{std::string(ns), std::string(name), patch});
  if (err_) return *err_;
  return OkStatus();
}

void FakePodControl::SetError(std::optional<Error> err) {
  std::lock_guard lock(mu_);
  err_ = std::move(err);
}

void FakePodControl::SetCreateLimit(int limit) {
  std::lock_guard lock(mu_);
  create_limit_ = limit;
}

void FakePodControl::SetCreateHook(std::function<Status()> hook) {
  std::lock_guard lock(mu_);
  create_hook_ = std::move(hook);
}

std::vector<api::PodTemplate> FakePodControl::Templates() const {
  std::lock_guard lock(mu_);
  return templates_;
}

std::vector<api::OwnerReference> FakePodControl::ControllerRefs() const {
  std::lock_guard lock(mu_);
  return controller_refs_;
}

std::vector<std::string> FakePodControl::DeletePodNames() const {
  std::lock_guard lock(mu_);
  return delete_pod_names_;
}

std::vector<FakePodControl::Patch> FakePodControl::Patches() const {
  std::lock_guard lock(mu_);
  return patches_;
}

int FakePodControl::CreateCallCount() const {
  std::lock_guard lock(mu_);
  return create_call_count_;
}

void FakePodControl::Clear() {
  std::lock_guard lock(mu_);
  create_call_count_ = 0;
  templates_.clear();
  controller_refs_.clear();
  delete_pod_names_.clear();
  patches_.clear();
}

}  // namespace kcm::controller::testing
