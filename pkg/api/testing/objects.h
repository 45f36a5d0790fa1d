// The test object builders of the controller tests (pkg/controller, the ReplicaSet and Deployment
// controllers), in one place: typed pods and ReplicaSets (PodBuilder, MakeReplicaSet, and the
// ReplicaSet controller's NewReplicaSet/NewPod shorthands over them), and Deployments,
// ReplicaSets and pods built as JSON and decoded by the real codecs, so raw_json is real
// (MakeDeployment, MakeRS, MakePod). Test-only (gtest assertions); not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pkg/api/codec.h"
#include "pkg/api/deployment.h"
#include "pkg/api/hash.h"
#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/api/time.h"

namespace kcm::api::testing {

using namespace std::chrono_literals;
using api::json::Value;

// Typed objects.

// A fixed wall-clock "now" far from the epoch, so "t ago" never underflows.
inline const api::Time kNow = api::Time{} + std::chrono::hours(24 * 365 * 50);

struct PodBuilder {
  api::Pod pod;

  explicit PodBuilder(std::string name, std::string ns = "default") {
    pod.metadata.name = name;
    pod.metadata.namespace_ = std::move(ns);
    pod.metadata.uid = "uid-" + name;
    pod.metadata.creation_timestamp = kNow - 1h;
    pod.node_name = "node-1";
    pod.phase = api::PodPhase::kRunning;
  }
  PodBuilder& Node(std::string n) { return pod.node_name = std::move(n), *this; }
  PodBuilder& Phase(api::PodPhase p) { return pod.phase = p, *this; }
  PodBuilder& Uid(std::string u) { return pod.metadata.uid = std::move(u), *this; }
  PodBuilder& Ready(std::optional<api::Time> since) {
    pod.ready = api::ConditionStatus::kTrue;
    pod.ready_transition_time = since;
    return *this;
  }
  PodBuilder& NotReady() {
    pod.ready = api::ConditionStatus::kFalse;
    return *this;
  }
  PodBuilder& Cost(int32_t c) { return pod.deletion_cost = c, *this; }
  // Through the decoders' NoteRestartCount, so a test sees the record's saturation, not a
  // silently truncated bit-field.
  PodBuilder& Restarts(int32_t max) {
    pod.restart_count_max = 0;
    pod.NoteRestartCount(max);
    return *this;
  }
  PodBuilder& Created(std::optional<api::Time> t) {
    return pod.metadata.creation_timestamp = t, *this;
  }
  PodBuilder& Deleting(api::Time at = kNow) { return pod.metadata.deletion_timestamp = at, *this; }
  PodBuilder& ResourceVersion(std::string rv) {
    return pod.metadata.resource_version = std::move(rv), *this;
  }
  PodBuilder& Label(std::string k, std::string v) {
    auto labels = pod.metadata.labels.ToMap();
    labels[std::move(k)] = std::move(v);
    pod.metadata.labels = labels;
    return *this;
  }
  PodBuilder& Owner(api::OwnerReference ref) {
    auto refs = pod.metadata.owner_references.ToVector();
    refs.push_back(std::move(ref));
    pod.metadata.owner_references = std::move(refs);
    return *this;
  }
  std::shared_ptr<const api::Pod> Build() const { return std::make_shared<const api::Pod>(pod); }
  std::shared_ptr<api::Pod> BuildMutable() const { return std::make_shared<api::Pod>(pod); }
};

inline std::shared_ptr<const api::ReplicaSet> MakeReplicaSet(
    std::string name, int32_t replicas, std::optional<api::Time> created,
    const char* revision = nullptr) {  // nullptr: no revision annotation
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata.name = std::move(name);
  rs->metadata.namespace_ = "default";
  rs->metadata.uid = "uid-" + rs->metadata.name;
  rs->metadata.creation_timestamp = created;
  if (revision != nullptr)
    rs->metadata.annotations.Set("deployment.kubernetes.io/revision", revision);
  rs->spec.replicas = replicas;
  return rs;
}

// A ReplicaSet "ns/<name>" selecting app=<name>, template labels app=<name>.
inline std::shared_ptr<api::ReplicaSet> NewReplicaSet(const std::string& name, int32_t replicas) {
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata.name = name;
  rs->metadata.namespace_ = "ns";
  rs->metadata.uid = "uid-" + name;
  rs->metadata.resource_version = "1";
  rs->metadata.generation = 1;
  rs->spec.replicas = replicas;
  rs->spec.selector = api::LabelSelector{{{"app", name}}, {}};
  rs->spec.pod_template.labels = {{"app", name}};
  rs->spec.pod_template.raw_json = R"({"metadata":{"labels":{"app":")" + name +
                                   R"("}},"spec":{"containers":[{"name":"c","image":"i"}]}})";
  rs->status.observed_generation = 1;
  return rs;
}

struct PodOptions {
  std::optional<std::string> owner;  // ReplicaSet name that controls the pod
  std::string app;                   // label app=<app>
  api::PodPhase phase = api::PodPhase::kRunning;
  bool ready = true;
  std::optional<api::Time> ready_since;
  std::string node = "node-1";
  bool deleting = false;
  int32_t cost = 0;  // controller.kubernetes.io/pod-deletion-cost (absent reads as 0)
  std::string resource_version = "1";
};

// A pod "ns/<name>" created an hour before `now`, through PodBuilder.
inline std::shared_ptr<api::Pod> NewPod(const std::string& name, const PodOptions& o,
                                        api::Time now) {
  PodBuilder b(name, "ns");
  b.ResourceVersion(o.resource_version).Created(now - 1h).Phase(o.phase).Node(o.node).Cost(o.cost);
  if (!o.app.empty()) b.Label("app", o.app);
  if (o.owner) b.Owner({"apps/v1", "ReplicaSet", *o.owner, "uid-" + *o.owner, true, true});
  if (o.ready) {
    b.Ready(o.ready_since ? *o.ready_since : now - 1h);
  } else {
    b.NotReady();
  }
  if (o.deleting) b.Deleting(now);
  return b.BuildMutable();
}

// Objects decoded from JSON.

inline void SetP(Value& root, api::json::Path path, Value v) {
  EXPECT_TRUE(api::json::SetPath(root, path, std::move(v)).ok());
}

inline Value Parse(const std::string& s) {
  auto v = api::json::Parse(s);
  EXPECT_TRUE(v.ok()) << s;
  return v.ok() ? *v : Value();
}

// Decoded as the controllers' clients decode an answer (raw JSON not packed).
inline std::shared_ptr<const api::Deployment> DecodeD(const std::string& json) {
  api::Decoder decoder;
  decoder.set_pack_raw_json(false);
  auto d = api::DecodeDeployment(decoder, api::JsonInput::FromString(json));
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().ToString()) << json;
  return d.ok() ? std::shared_ptr<const api::Deployment>(std::move(d).value()) : nullptr;
}
inline std::shared_ptr<const api::ReplicaSet> DecodeRS(const std::string& json) {
  api::Decoder decoder;
  decoder.set_pack_raw_json(false);
  auto rs = api::DecodeReplicaSet(decoder, api::JsonInput::FromString(json));
  EXPECT_TRUE(rs.ok()) << (rs.ok() ? "" : rs.error().ToString()) << json;
  return rs.ok() ? std::shared_ptr<const api::ReplicaSet>(std::move(rs).value()) : nullptr;
}

// A pod template {labels: {app: <app>}, containers: [{name: c, image: <image>}]}.
inline Value Template(const std::string& image, const std::string& app = "foo") {
  return Parse(R"({"metadata":{"labels":{"app":")" + app +
               R"("}},"spec":{"containers":[{"name":"c","image":")" + image + R"("}]}})");
}

struct DeploymentSpec {
  std::string name = "foo";
  std::string ns = "default";
  std::string uid = "d-uid";
  int64_t generation = 1;
  int32_t replicas = 3;
  std::string image = "img:1";
  std::string strategy = "RollingUpdate";
  std::optional<std::string> max_surge = "\"25%\"";        // JSON text; nullopt = absent
  std::optional<std::string> max_unavailable = "\"25%\"";  // JSON text; nullopt = absent
  std::optional<int32_t> progress_deadline = 600;
  std::optional<int32_t> revision_history_limit = 10;
  bool paused = false;
  std::string selector = R"({"matchLabels":{"app":"foo"}})";
  std::map<std::string, std::string> annotations;
  std::string status = "{}";  // JSON text of .status
  bool deleting = false;
};

inline std::string DeploymentJson(const DeploymentSpec& s) {
  Value d = Value::MakeObject();
  d.Set("apiVersion", Value::String("apps/v1"));
  d.Set("kind", Value::String("Deployment"));
  Value meta = Value::MakeObject();
  meta.Set("name", Value::String(s.name));
  meta.Set("namespace", Value::String(s.ns));
  meta.Set("uid", Value::String(s.uid));
  meta.Set("resourceVersion", Value::String("100"));
  meta.Set("generation", Value::Int(s.generation));
  meta.Set("creationTimestamp", Value::String("2023-01-01T00:00:00Z"));
  if (s.deleting) meta.Set("deletionTimestamp", Value::String("2023-11-14T22:00:00Z"));
  if (!s.annotations.empty()) {
    Value a = Value::MakeObject();
    for (const auto& [k, v] : s.annotations) a.Set(k, Value::String(v));
    meta.Set("annotations", a);
  }
  d.Set("metadata", meta);
  Value spec = Value::MakeObject();
  spec.Set("replicas", Value::Int(s.replicas));
  spec.Set("selector", Parse(s.selector));
  spec.Set("template", Template(s.image));
  Value strategy = Value::MakeObject();
  strategy.Set("type", Value::String(s.strategy));
  if (s.strategy == "RollingUpdate" && (s.max_surge || s.max_unavailable)) {
    Value ru = Value::MakeObject();
    if (s.max_surge) ru.Set("maxSurge", Parse(*s.max_surge));
    if (s.max_unavailable) ru.Set("maxUnavailable", Parse(*s.max_unavailable));
    strategy.Set("rollingUpdate", ru);
  }
  spec.Set("strategy", strategy);
  if (s.progress_deadline) spec.Set("progressDeadlineSeconds", Value::Int(*s.progress_deadline));
  if (s.revision_history_limit) {
    spec.Set("revisionHistoryLimit", Value::Int(*s.revision_history_limit));
  }
  if (s.paused) spec.Set("paused", Value::Bool(true));
  d.Set("spec", spec);
  d.Set("status", Parse(s.status));
  return api::json::Serialize(d);
}

inline std::shared_ptr<const api::Deployment> MakeDeployment(const DeploymentSpec& s = {}) {
  return DecodeD(DeploymentJson(s));
}

struct RSSpec {
  std::string name;  // default: <deployment>-<hash of image>
  std::string image = "img:1";
  int32_t replicas = 0;
  int32_t status_replicas = -1;  // -1: same as replicas
  int32_t available = -1;        // -1: same as status_replicas
  int64_t revision = 1;          // 0: no annotation
  int created_minute = 0;        // creationTimestamp 2023-01-01T00:<m>:00Z
  bool owned = true;
  std::string owner_uid;  // default: the deployment's uid
  std::map<std::string, std::string> annotations;
  int64_t generation = 1;
  int64_t observed_generation = 1;
  std::string uid;  // default: "rs-uid-<name>"
};

inline std::shared_ptr<const api::ReplicaSet> MakeRS(const api::Deployment& d, RSSpec s) {
  Value tmpl = Template(s.image);
  const std::string hash = api::ComputePodTemplateHash(tmpl, std::nullopt);
  if (s.name.empty()) s.name = d.metadata.name + "-" + hash;
  if (s.status_replicas < 0) s.status_replicas = s.replicas;
  if (s.available < 0) s.available = s.status_replicas;
  SetP(tmpl, {"metadata", "labels", "pod-template-hash"}, Value::String(hash));
  Value rs = Value::MakeObject();
  rs.Set("apiVersion", Value::String("apps/v1"));
  rs.Set("kind", Value::String("ReplicaSet"));
  Value meta = Value::MakeObject();
  meta.Set("name", Value::String(s.name));
  meta.Set("namespace", Value::String(d.metadata.namespace_));
  meta.Set("uid", Value::String(s.uid.empty() ? "rs-uid-" + s.name : s.uid));
  meta.Set("resourceVersion", Value::String("10"));
  meta.Set("generation", Value::Int(s.generation));
  char ts[32];
  snprintf(ts, sizeof ts, "2023-01-01T00:%02d:00Z", s.created_minute);
  meta.Set("creationTimestamp", Value::String(ts));
  meta.Set("labels", Parse(R"({"app":"foo","pod-template-hash":")" + hash + "\"}"));
  Value annotations = Value::MakeObject();
  if (s.revision > 0) {
    annotations.Set("deployment.kubernetes.io/revision", Value::String(std::to_string(s.revision)));
  }
  for (const auto& [k, v] : s.annotations) annotations.Set(k, Value::String(v));
  meta.Set("annotations", annotations);
  if (s.owned) {
    api::OwnerReference ref = api::ControllerOwnerReference("apps/v1", "Deployment", d.metadata);
    if (!s.owner_uid.empty()) ref.uid = s.owner_uid;
    Value owners = Value::MakeArray();
    owners.as_array().push_back(api::OwnerReferenceToJson(ref));
    meta.Set("ownerReferences", owners);
  }
  rs.Set("metadata", meta);
  Value spec = Value::MakeObject();
  spec.Set("replicas", Value::Int(s.replicas));
  spec.Set("selector",
           Parse(R"({"matchLabels":{"app":"foo","pod-template-hash":")" + hash + "\"}}"));
  spec.Set("template", tmpl);
  rs.Set("spec", spec);
  Value status = Value::MakeObject();
  status.Set("replicas", Value::Int(s.status_replicas));
  status.Set("readyReplicas", Value::Int(s.available));
  status.Set("availableReplicas", Value::Int(s.available));
  status.Set("observedGeneration", Value::Int(s.observed_generation));
  rs.Set("status", status);
  return DecodeRS(api::json::Serialize(rs));
}

inline std::shared_ptr<const api::Pod> MakePod(const std::string& name, const api::ReplicaSet& rs,
                                               const std::string& phase = "Running") {
  Value pod = Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                    R"(","namespace":")" + rs.metadata.namespace_ + R"(","uid":"pod-)" + name +
                    R"(","labels":{"app":"foo"}},"spec":{},"status":{"phase":")" + phase + "\"}}");
  Value owners = Value::MakeArray();
  owners.as_array().push_back(api::OwnerReferenceToJson(
      api::ControllerOwnerReference("apps/v1", "ReplicaSet", rs.metadata)));
  SetP(pod, {"metadata", "ownerReferences"}, owners);
  api::Decoder decoder;
  auto p = api::DecodePod(decoder, api::json::Serialize(pod));
  EXPECT_TRUE(p.ok());
  return p.ok() ? *p : nullptr;
}

}  // namespace kcm::api::testing
