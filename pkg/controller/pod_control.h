// PodControlInterface (R7, R8, R11, R12): how the ReplicaSet controller creates, deletes and
// patches pods, with the events upstream records on the controller. RealPodControl writes through
// the API server, a batch's writes as requests in flight from the one calling thread
// (client::RestClient::DoAll). Implementations are thread-safe (several workers call them).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/api/object_meta.h"
#include "pkg/api/pod_template.h"
#include "pkg/controller/write_fence.h"
#include "pkg/controller/write_outcome.h"
#include "pkg/record/event_recorder.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
}

namespace kcm::controller {

// Event reasons (R12), as upstream.
inline constexpr std::string_view kSuccessfulCreatePodReason = "SuccessfulCreate";
inline constexpr std::string_view kFailedCreatePodReason = "FailedCreate";
inline constexpr std::string_view kSuccessfulDeletePodReason = "SuccessfulDelete";
inline constexpr std::string_view kFailedDeletePodReason = "FailedDelete";

// The create body of a pod from `pod_template` (R11): generateName "<parent_name>-", namespace
// `ns`, the template's labels, annotations and finalizers, `controller_ref` (when given) as the
// only ownerReference, and the template's spec verbatim. Refused ("Invalid") when the template
// has no labels: such a pod could never match its controller's selector.
Result<std::string> GetPodFromTemplate(const api::PodTemplate& pod_template, std::string_view ns,
                                       std::string_view parent_name,
                                       const api::OwnerReference* controller_ref);

class PodControlInterface {
 public:
  virtual ~PodControlInterface() = default;

  // Creates one pod from `pod_template` in `ns`, owned through `controller_ref`; events go to
  // `controller_object`.
  virtual Status CreatePods(std::string_view ns, const api::PodTemplate& pod_template,
                            const api::Object& controller_object,
                            const api::OwnerReference& controller_ref) = 0;
  // Deletes pod `name`. A NotFound answer is returned as is (callers treat it as done).
  virtual Status DeletePod(std::string_view ns, std::string_view name,
                           const api::Object& controller_object) = 0;
  // Sends a strategic merge patch to pod `name` (adopt/release, R13).
  virtual Status PatchPod(std::string_view ns, std::string_view name, const std::string& patch) = 0;

  // `count` CreatePods calls at once (a slow-start batch), one outcome each, in order. Once
  // `stop` is requested no further create is sent (skipped). Events, logs and the write observer
  // run on the calling thread. This default makes the calls inline, one after another (fakes and
  // wrappers); RealPodControl sends them all as requests in flight.
  virtual std::vector<WriteOutcome> CreatePodsBatch(std::string_view ns,
                                                    const api::PodTemplate& pod_template,
                                                    const api::Object& controller_object,
                                                    const api::OwnerReference& controller_ref,
                                                    int count, std::stop_token stop);
  // DeletePod for each of `names` at once, one outcome each, in order; as CreatePodsBatch.
  virtual std::vector<WriteOutcome> DeletePodsBatch(std::string_view ns,
                                                    std::span<const std::string> names,
                                                    const api::Object& controller_object,
                                                    std::stop_token stop);
};

// Told about each pod write that returned the stored pod: the pod's namespace, its controller
// (the owner the write was for) and the resourceVersion the write produced (upstream
// RealPodControl.OnWrite, which feeds the ReplicaSet controller's ConsistencyStore).
using PodWriteObserver = std::function<void(std::string_view ns, const api::OwnerReference& owner,
                                            const std::string& resource_version)>;

class RealPodControl final : public PodControlInterface {
 public:
  // `pods` serves core/v1 pods; `controller_api_version` ("apps/v1") names the controller
  // objects in events. The recorder must outlive this object. Once `fence` is closed every call
  // is refused before it reaches the client ("Canceled", no event recorded).
  RealPodControl(std::shared_ptr<client::ResourceClient> pods, record::EventRecorder& recorder,
                 std::string controller_api_version, WriteFence fence = {});

  Status CreatePods(std::string_view ns, const api::PodTemplate& pod_template,
                    const api::Object& controller_object,
                    const api::OwnerReference& controller_ref) override;
  Status DeletePod(std::string_view ns, std::string_view name,
                   const api::Object& controller_object) override;
  Status PatchPod(std::string_view ns, std::string_view name, const std::string& patch) override;
  std::vector<WriteOutcome> CreatePodsBatch(std::string_view ns,
                                            const api::PodTemplate& pod_template,
                                            const api::Object& controller_object,
                                            const api::OwnerReference& controller_ref, int count,
                                            std::stop_token stop) override;
  std::vector<WriteOutcome> DeletePodsBatch(std::string_view ns, std::span<const std::string> names,
                                            const api::Object& controller_object,
                                            std::stop_token stop) override;

  // Called after each successful create (with the controllerRef it was created for) and each
  // successful patch of a pod that has a controller afterwards (an adoption; a release leaves
  // none). Deletions are not reported, as upstream. Set before the first write.
  void SetOnWrite(PodWriteObserver on_write) { on_write_ = std::move(on_write); }

 private:
  // What CreatePods does with the create's answer (events, the observer, the log).
  Status CreatedPod(std::string_view ns, Result<std::string> created,
                    const api::Object& controller_object,
                    const api::OwnerReference& controller_ref);
  // What DeletePod does with the delete's answer.
  Status DeletedPod(std::string_view ns, std::string_view name, Result<std::string> deleted,
                    const api::Object& controller_object);

  std::shared_ptr<client::ResourceClient> pods_;
  PodWriteObserver on_write_;
  record::EventRecorder& recorder_;
  std::string controller_api_version_;
  WriteFence fence_;
};

}  // namespace kcm::controller
