// FakePodControl: a PodControlInterface for controller unit tests (upstream FakePodControl). It
// records what was asked (templates, owner refs, deleted pod names, patches) and can be told to
// fail. Thread-safe; tests read the records after the calls return.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/object_meta.h"
#include "pkg/api/pod_template.h"
#include "pkg/controller/pod_control.h"

namespace kcm::controller::testing {

class FakePodControl final : public PodControlInterface {
 public:
  struct Patch {
    std::string ns;
    std::string name;
    std::string body;
  };

  Status CreatePods(std::string_view ns, const api::PodTemplate& pod_template,
                    const api::Object& controller_object,
                    const api::OwnerReference& controller_ref) override;
  Status DeletePod(std::string_view ns, std::string_view name,
                   const api::Object& controller_object) override;
  Status PatchPod(std::string_view ns, std::string_view name, const std::string& patch) override;

  // Every call fails with this error while it is set (the call is still recorded, as upstream).
  void SetError(std::optional<Error> err);
  // Creations beyond this many fail with a local "CreateLimit" error (0 = no limit).
  void SetCreateLimit(int limit);
  // Per-call hook for creates: returning an error fails that call (called under no lock).
  void SetCreateHook(std::function<Status()> hook);

  std::vector<api::PodTemplate> Templates() const;
  std::vector<api::OwnerReference> ControllerRefs() const;
  std::vector<std::string> DeletePodNames() const;
  std::vector<Patch> Patches() const;
  int CreateCallCount() const;
  void Clear();

 private:
  mutable std::mutex mu_;
  std::optional<Error> err_;
  int create_limit_ = 0;
  int create_call_count_ = 0;
  std::function<Status()> create_hook_;
  std::vector<api::PodTemplate> templates_;
  std::vector<api::OwnerReference> controller_refs_;
  std::vector<std::string> delete_pod_names_;
  std::vector<Patch> patches_;
};

}  // namespace kcm::controller::testing
