// Test support for the Deployment controller: the JSON-decoded builders of
// pkg/api/testing/objects.h, and a fixture wiring the recording fakes of the Deployment and
// ReplicaSet clients (one ActionLog), listers over indexers filled directly, a FakeRecorder and a
// FakeClock. Test-only; not thread-safe.
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
#include "pkg/api/testing/objects.h"
#include "pkg/api/time.h"
#include "pkg/cache/index.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/testing/fake_typed_client.h"
#include "pkg/record/testing/fake_recorder.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::deployment::testing {

using api::json::Value;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using api::testing::DecodeD;
using api::testing::DecodeRS;
using api::testing::DeploymentJson;
using api::testing::DeploymentSpec;
using api::testing::MakeDeployment;
using api::testing::MakePod;
using api::testing::MakeRS;
using api::testing::Parse;
using api::testing::RSSpec;
using api::testing::SetP;
using api::testing::Template;

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
    // Deployments come from JSON: status writes are answered as an API server stores them.
    deployments_ = std::make_shared<controller::testing::FakeDeploymentClient>(
        actions_, controller::testing::StatusAnswer::kDecodedBody);
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
        {api::kDeployments.GroupResource(), [this](std::string_view) { return d_store_rv_; }},
        {api::kReplicaSets.GroupResource(), [this](std::string_view) { return rs_store_rv_; }}};
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
