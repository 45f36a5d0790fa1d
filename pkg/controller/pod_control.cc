#include "pkg/controller/pod_control.h"

#include <algorithm>
#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/json_find.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/record/reference.h"
#include "pkg/util/any_stop.h"
#include "pkg/util/klog.h"

namespace kcm::controller {

namespace json = api::json;

Result<std::string> GetPodFromTemplate(const api::PodTemplate& pod_template, std::string_view ns,
                                       std::string_view parent_name,
                                       const api::OwnerReference* controller_ref) {
  if (pod_template.labels.empty()) {
    return Error::Local("InvalidArgument", "unable to create pods, no labels");
  }
  return api::PodFromTemplate(pod_template, std::string(parent_name) + "-", ns, controller_ref);
}

RealPodControl::RealPodControl(std::shared_ptr<client::ResourceClient> pods,
                               record::EventRecorder& recorder, std::string controller_api_version,
                               WriteFence fence)
    : pods_(std::move(pods)),
      recorder_(recorder),
      controller_api_version_(std::move(controller_api_version)),
      fence_(std::move(fence)) {}

namespace {

WriteOutcome Skipped(std::string_view what) {
  return {errors::Canceled(std::string(what) + " not sent: stop requested"), true};
}

// One outcome per answer of a batch, in order: a write never sent is skipped, a sent one is what
// `finish(i, answer)` makes of its answer (events, the observer, the log).
template <typename Finish>
std::vector<WriteOutcome> Outcomes(std::vector<client::CallAnswer> answers, Finish finish) {
  std::vector<WriteOutcome> out;
  out.reserve(answers.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].sent) {
      out.push_back({std::move(answers[i].body).error(), true});
    } else {
      out.push_back({finish(i, std::move(answers[i].body))});
    }
  }
  return out;
}

}  // namespace

std::vector<WriteOutcome> PodControlInterface::CreatePodsBatch(
    std::string_view ns, const api::PodTemplate& pod_template, const api::Object& controller_object,
    const api::OwnerReference& controller_ref, int count, std::stop_token stop) {
  std::vector<WriteOutcome> out;
  out.reserve(static_cast<size_t>(std::max(count, 0)));
  for (int i = 0; i < count; ++i) {
    if (stop.stop_requested()) {
      out.push_back(Skipped("pod create"));
    } else {
      out.push_back({CreatePods(ns, pod_template, controller_object, controller_ref)});
    }
  }
  return out;
}

std::vector<WriteOutcome> PodControlInterface::DeletePodsBatch(std::string_view ns,
                                                               std::span<const std::string> names,
                                                               const api::Object& controller_object,
                                                               std::stop_token stop) {
  std::vector<WriteOutcome> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    if (stop.stop_requested()) {
      out.push_back(Skipped("pod delete"));
    } else {
      out.push_back({DeletePod(ns, name, controller_object)});
    }
  }
  return out;
}

Status RealPodControl::CreatePods(std::string_view ns, const api::PodTemplate& pod_template,
                                  const api::Object& controller_object,
                                  const api::OwnerReference& controller_ref) {
  Result<std::string> body =
      GetPodFromTemplate(pod_template, ns, controller_object.Meta().name, &controller_ref);
  if (!body.ok()) return body.error();
  auto pass = fence_.Admit("create pod in " + std::string(ns), ns);
  if (!pass.ok()) return pass.error();
  const AnyStop cancel(fence_.token(), WriteFence::TokenOf(*pass));
  return CreatedPod(ns, pods_->Create(ns, std::move(*body), {}, cancel.token()), controller_object,
                    controller_ref);
}

std::vector<WriteOutcome> RealPodControl::CreatePodsBatch(std::string_view ns,
                                                          const api::PodTemplate& pod_template,
                                                          const api::Object& controller_object,
                                                          const api::OwnerReference& controller_ref,
                                                          int count, std::stop_token stop) {
  const size_t n = static_cast<size_t>(std::max(count, 0));
  // One body for every create: the pods differ only by the name the server generates.
  Result<std::string> body =
      GetPodFromTemplate(pod_template, ns, controller_object.Meta().name, &controller_ref);
  if (!body.ok()) return std::vector<WriteOutcome>(n, WriteOutcome{body.error()});
  auto pass = fence_.Admit("create pod in " + std::string(ns), ns);
  if (!pass.ok()) return std::vector<WriteOutcome>(n, WriteOutcome{pass.error()});
  const AnyStop fenced(fence_.token(), WriteFence::TokenOf(*pass));
  const AnyStop either(stop, fenced.token());
  return Outcomes(pods_->CreateMany(ns, *body, count, {}, either.token()),
                  [&](size_t, Result<std::string> created) {
                    return CreatedPod(ns, std::move(created), controller_object, controller_ref);
                  });
}

Status RealPodControl::CreatedPod(std::string_view ns, Result<std::string> created,
                                  const api::Object& controller_object,
                                  const api::OwnerReference& controller_ref) {
  const record::ObjectReference ref =
      record::GetReference(controller_object, controller_api_version_);
  if (!created.ok()) {
    // Creates into a terminating namespace are expected while it drains, and a create cut off
    // by the stop is no failure of the pod: no warning for them.
    if (!errors::IsNamespaceTerminating(created.error()) && !IsStopped(created.error())) {
      recorder_.Event(ref, record::kEventTypeWarning, kFailedCreatePodReason,
                      "Error creating: " + created.error().message);
    }
    return created.error();
  }
  std::string name;
  // Two fields of the answer; the whole pod is decoded only when they cannot be read plainly.
  std::optional<std::string> plain_name = json::FindPlainString(*created, {"metadata", "name"});
  std::optional<std::string> plain_rv =
      json::FindPlainString(*created, {"metadata", "resourceVersion"});
  if (plain_name && plain_rv) {
    name = std::move(*plain_name);
    if (on_write_) on_write_(ns, controller_ref, *plain_rv);
  } else if (Result<json::Value> pod = json::Parse(*created); pod.ok()) {
    if (const json::Value* v = json::GetPath(*pod, {"metadata", "name"}); v && v->is_string()) {
      name = v->as_string();
    }
    const json::Value* rv = json::GetPath(*pod, {"metadata", "resourceVersion"});
    if (on_write_ && rv != nullptr && rv->is_string())
      on_write_(ns, controller_ref, rv->as_string());
  }
  KLOG_V_INFOS(4, "Controller created pod", "controller", controller_object.Meta().name, "pod",
               klog::KRef(ns, name));
  recorder_.Event(ref, record::kEventTypeNormal, kSuccessfulCreatePodReason,
                  "Created pod: " + name);
  return OkStatus();
}

Status RealPodControl::DeletePod(std::string_view ns, std::string_view name,
                                 const api::Object& controller_object) {
  auto pass = fence_.Admit("delete pod " + std::string(ns) + "/" + std::string(name), ns);
  if (!pass.ok()) return pass.error();
  KLOG_V_INFOS(2, "Deleting pod", "controller", controller_object.Meta().name, "pod",
               klog::KRef(ns, name));
  const AnyStop cancel(fence_.token(), WriteFence::TokenOf(*pass));
  return DeletedPod(ns, name, pods_->Delete(ns, name, {}, cancel.token()), controller_object);
}

std::vector<WriteOutcome> RealPodControl::DeletePodsBatch(std::string_view ns,
                                                          std::span<const std::string> names,
                                                          const api::Object& controller_object,
                                                          std::stop_token stop) {
  auto pass = fence_.Admit("delete pods in " + std::string(ns), ns);
  if (!pass.ok()) return std::vector<WriteOutcome>(names.size(), WriteOutcome{pass.error()});
  for (const std::string& name : names) {
    KLOG_V_INFOS(2, "Deleting pod", "controller", controller_object.Meta().name, "pod",
                 klog::KRef(ns, name));
  }
  const AnyStop fenced(fence_.token(), WriteFence::TokenOf(*pass));
  const AnyStop either(stop, fenced.token());
  return Outcomes(pods_->DeleteMany(ns, names, {}, either.token()),
                  [&](size_t i, Result<std::string> deleted) {
                    return DeletedPod(ns, names[i], std::move(deleted), controller_object);
                  });
}

Status RealPodControl::DeletedPod(std::string_view ns, std::string_view name,
                                  Result<std::string> deleted,
                                  const api::Object& controller_object) {
  if (deleted.ok()) {
    recorder_.Event(record::GetReference(controller_object, controller_api_version_),
                    record::kEventTypeNormal, kSuccessfulDeletePodReason,
                    "Deleted pod: " + std::string(name));
    return OkStatus();
  }
  if (errors::IsNotFound(deleted.error())) {
    KLOG_V_INFOS(4, "Pod has already been deleted.", "pod", klog::KRef(ns, name));
    return deleted.error();
  }
  if (IsStopped(deleted.error())) return deleted.error();
  recorder_.Event(record::GetReference(controller_object, controller_api_version_),
                  record::kEventTypeWarning, kFailedDeletePodReason,
                  "Error deleting: " + deleted.error().message);
  Error e = deleted.error();
  e.message = "unable to delete pods: " + e.message;
  return e;
}

Status RealPodControl::PatchPod(std::string_view ns, std::string_view name,
                                const std::string& patch) {
  auto pass = fence_.Admit("patch pod " + std::string(ns) + "/" + std::string(name), ns);
  if (!pass.ok()) return pass.error();
  const AnyStop cancel(fence_.token(), WriteFence::TokenOf(*pass));
  Result<std::string> patched = pods_->Patch(ns, name, client::PatchType::kStrategicMergePatch,
                                             patch, {}, "", cancel.token());
  if (!patched.ok()) return patched.error();
  if (!on_write_) return OkStatus();
  Result<json::Value> pod = json::Parse(*patched);
  if (!pod.ok()) return OkStatus();
  const json::Value* rv = json::GetPath(*pod, {"metadata", "resourceVersion"});
  const json::Value* refs = json::GetPath(*pod, {"metadata", "ownerReferences"});
  if (rv == nullptr || !rv->is_string() || refs == nullptr || !refs->is_array()) return OkStatus();
  for (const json::Value& ref : refs->as_array()) {
    const json::Value* controller = ref.Find("controller");
    if (controller == nullptr || !controller->is_bool() || !controller->as_bool()) continue;
    api::OwnerReference owner;
    for (auto [field, out] : {std::pair{"apiVersion", &owner.api_version},
                              std::pair{"kind", &owner.kind}, std::pair{"name", &owner.name}}) {
      if (const json::Value* v = ref.Find(field); v != nullptr && v->is_string()) {
        *out = v->as_string();
      }
    }
    if (const json::Value* v = ref.Find("uid"); v != nullptr && v->is_string()) {
      owner.uid = v->as_string();
    }
    owner.controller = true;
    on_write_(ns, owner, rv->as_string());
    break;
  }
  return OkStatus();
}

}  // namespace kcm::controller
