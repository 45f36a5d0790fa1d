// Test support for the Deployment controller: JSON builders for Deployments, ReplicaSets and pods
// (decoded by the real codecs, so raw_json is real), and a fixture wiring the recording fakes of
// the Deployment and ReplicaSet clients (one ActionLog), listers over indexers filled directly, a
// FakeRecorder and a FakeClock. Test-only; not thread-safe.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controllers/deployment/deployment_controller.h"
#include "pkg/api/codec.h"
#include "pkg/api/hash.h"
#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/time.h"
#include "pkg/cache/index.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/testing/fake_clients.h"
#include "pkg/record/testing/fake_recorder.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::deployment::testing {

using api::json::Value;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

inline void SetP(Value& root, api::json::Path path, Value v) {
  EXPECT_TRUE(api::json::SetPath(root, path, std::move(v)).ok());
}

inline Value Parse(const std::string& s) {
  auto v = api::json::Parse(s);
  EXPECT_TRUE(v.ok()) << s;
  return v.ok() ? *v : Value();
}

inline std::shared_ptr<const api::Deployment> DecodeD(const std::string& json) {
  auto d = controller::DecodeDeploymentBody(json);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().ToString()) << json;
  return d.ok() ? *d : nullptr;
}
inline std::shared_ptr<const api::ReplicaSet> DecodeRS(const std::string& json) {
  auto rs = controller::DecodeReplicaSetBody(json);
  EXPECT_TRUE(rs.ok()) << (rs.ok() ? "" : rs.error().ToString()) << json;
  return rs.ok() ? *rs : nullptr;
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

// The keys of what a handler asks to enqueue, in order.
inline std::vector<std::string> Keys(const std::vector<runtime::Request>& requests) {
  std::vector<std::string> keys;
  for (const auto& r : requests) keys.push_back(r.Key());
  return keys;
}

inline const api::Condition* Cond(const api::Deployment& d, std::string_view type) {
  return util::GetDeploymentCondition(d.status, type);
}

class DeploymentControllerTest : public ::testing::Test {
 protected:
  DeploymentControllerTest() : d_index_(NewIndex()), rs_index_(NewIndex()), pod_index_(NewIndex()) {
    deployments_ = std::make_shared<controller::testing::FakeDeploymentClient>(actions_);
    replicasets_ = std::make_shared<controller::testing::FakeReplicaSetClient>(actions_);
    recorder_ = std::make_shared<record::FakeRecorder>();
    DeploymentControllerOptions opts;
    opts.clock = &clock_;
    // No informers: the tests fill the listers' indexers and call the handlers and syncs.
    controller_ = std::make_unique<DeploymentController>(
        informers::TypedInformer<api::Deployment>{nullptr, informers::DeploymentLister(d_index_)},
        informers::TypedInformer<api::ReplicaSet>{nullptr, informers::ReplicaSetLister(rs_index_)},
        informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, deployments_,
        replicasets_, recorder_, opts);
  }

  // Rebuilds the controller with the read-your-own-writes check on, the stores' applied
  // resourceVersions read from d_store_rv_ and rs_store_rv_ (the tests move them as an informer
  // would apply the watch stream).
  void EnableReadYourWrites() {
    DeploymentControllerOptions opts;
    opts.clock = &clock_;
    opts.consistency_rv_getters = {
        {kDeploymentsGroupResource, [this] { return d_store_rv_; }},
        {kDeploymentReplicaSetsGroupResource, [this] { return rs_store_rv_; }}};
    controller_ = std::make_unique<DeploymentController>(
        informers::TypedInformer<api::Deployment>{nullptr, informers::DeploymentLister(d_index_)},
        informers::TypedInformer<api::ReplicaSet>{nullptr, informers::ReplicaSetLister(rs_index_)},
        informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, deployments_,
        replicasets_, recorder_, opts);
  }

  static std::shared_ptr<cache::Indexer> NewIndex() {
    return cache::NewIndexer(cache::MetaNamespaceKeyFunc,
                             {{cache::kNamespaceIndex, cache::MetaNamespaceIndexFunc}});
  }

  void Add(const std::shared_ptr<const api::Deployment>& d) { ASSERT_TRUE(d_index_->Add(d).ok()); }
  void Add(const std::shared_ptr<const api::ReplicaSet>& rs) {
    ASSERT_TRUE(rs_index_->Add(rs).ok());
  }
  void Add(const std::shared_ptr<const api::Pod>& p) { ASSERT_TRUE(pod_index_->Add(p).ok()); }
  static void Reset(const std::shared_ptr<cache::Indexer>& index,
                    std::vector<api::ObjectPtr> items = {}) {
    ASSERT_TRUE(index->Replace(std::move(items), "").ok());
  }

  // syncDeployment's outcome, for tests of what it wrote or failed with.
  Status Sync(const std::string& name = "foo") {
    Result<runtime::ReconcileResult> r = controller_->SyncDeployment("default", name);
    if (!r.ok()) return r.error();
    return OkStatus();
  }
  // What the runtime gets for the key: syncDeployment, then handleErr.
  Result<runtime::ReconcileResult> Reconcile(const std::string& name = "foo") {
    return controller_->Reconcile({"default", name}, {});
  }

  // Spec sizes the update actions gave each RS, by name (last write wins).
  std::map<std::string, int32_t> ScaledTo() const {
    std::map<std::string, int32_t> out;
    for (const auto& rs : WrittenRS("update")) out[rs->metadata.name] = rs->spec.replicas;
    return out;
  }

  std::vector<controller::testing::Action> Of(const std::string& verb,
                                              const std::string& resource) const {
    return actions_->Of(verb, resource);
  }
  // The ReplicaSets the writes of `verb` produced, decoded.
  std::vector<std::shared_ptr<const api::ReplicaSet>> WrittenRS(const std::string& verb) const {
    std::vector<std::shared_ptr<const api::ReplicaSet>> out;
    for (const auto& a : Of(verb, "replicasets")) out.push_back(DecodeRS(a.body));
    return out;
  }
  // The last Deployment status written, decoded.
  std::shared_ptr<const api::Deployment> LastStatus() const {
    auto w = Of("update-status", "deployments");
    return w.empty() ? nullptr : DecodeD(w.back().body);
  }

  FakeClock clock_;
  std::shared_ptr<cache::Indexer> d_index_, rs_index_, pod_index_;
  std::shared_ptr<controller::testing::ActionLog> actions_ =
      std::make_shared<controller::testing::ActionLog>();
  std::shared_ptr<controller::testing::FakeDeploymentClient> deployments_;
  std::shared_ptr<controller::testing::FakeReplicaSetClient> replicasets_;
  std::shared_ptr<record::FakeRecorder> recorder_;
  std::unique_ptr<DeploymentController> controller_;
  std::string d_store_rv_ = "100";  // MakeDeployment's resourceVersion
  std::string rs_store_rv_ = "10";  // MakeRS's resourceVersion
};

}  // namespace kcm::deployment::testing
