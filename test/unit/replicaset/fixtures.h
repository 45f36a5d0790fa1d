// Test fixtures for the ReplicaSet controller's unit tests: listers over indexers the test fills,
// the recording FakeReplicaSetClient, FakePodControl and a FakeClock. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controllers/replicaset/replica_set.h"
#include "pkg/cache/index.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/testing/fake_clients.h"
#include "pkg/controller/testing/fake_pod_control.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::replicaset::testing {

using namespace std::chrono_literals;

using controller::testing::FakeReplicaSetClient;

inline std::shared_ptr<cache::Indexer> NewTestIndexer() {
  return cache::NewIndexer(cache::MetaNamespaceKeyFunc,
                           {{cache::kNamespaceIndex, cache::MetaNamespaceIndexFunc}});
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

inline std::shared_ptr<api::Pod> NewPod(const std::string& name, const PodOptions& o,
                                        api::Time now) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = name;
  pod->metadata.namespace_ = "ns";
  pod->metadata.uid = "uid-" + name;
  pod->metadata.resource_version = o.resource_version;
  pod->metadata.creation_timestamp = now - 1h;
  if (!o.app.empty()) pod->metadata.labels = {{"app", o.app}};
  if (o.owner) {
    pod->metadata.owner_references = {
        {"apps/v1", "ReplicaSet", *o.owner, "uid-" + *o.owner, true, true}};
  }
  pod->phase = o.phase;
  pod->node_name = o.node;
  if (o.ready) {
    pod->ready = api::ConditionStatus::kTrue;
    pod->ready_transition_time = o.ready_since ? *o.ready_since : now - 1h;
  } else {
    pod->ready = api::ConditionStatus::kFalse;
  }
  if (o.deleting) pod->metadata.deletion_timestamp = now;
  pod->deletion_cost = o.cost;
  return pod;
}

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() { Rebuild({}); }

  void Rebuild(ReplicaSetControllerOptions options) {
    options.clock = &clock_;
    controller_ = std::make_unique<ReplicaSetController>(
        informers::TypedInformer<api::ReplicaSet>{nullptr, informers::ReplicaSetLister(rs_index_)},
        informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, rs_client_,
        pod_control_, options);
  }

  api::Time Now() const { return clock_.WallNow(); }
  void AddRS(const std::shared_ptr<api::ReplicaSet>& rs) {
    ASSERT_TRUE(rs_index_->Add(rs).ok());
    rs_client_->Set(rs);
  }
  std::shared_ptr<api::Pod> AddPod(const std::string& name, PodOptions o) {
    auto pod = NewPod(name, o, Now());
    EXPECT_TRUE(pod_index_->Add(pod).ok());
    return pod;
  }
  // `n` ready pods owned by `rs` named <rs>-0 … <rs>-(n-1).
  void AddOwnedPods(const std::string& rs, int n) {
    for (int i = 0; i < n; ++i) AddPod(rs + "-" + std::to_string(i), {.owner = rs, .app = rs});
  }
  Result<runtime::ReconcileResult> Sync(const std::string& name) {
    return controller_->Reconcile({"ns", name}, {});
  }
  // Enqueues what a handler returned, as the runtime's handler adapter does.
  void Enq(const std::vector<runtime::Enqueue>& requests) { runtime::AddAll(queue_, requests); }
  std::vector<std::string> QueueKeys() {
    std::vector<std::string> keys;
    while (queue_.Len() > 0) {
      auto k = queue_.Get();
      if (!k) break;
      keys.push_back(*k);
      queue_.Done(*k);
    }
    return keys;
  }

  FakeClock clock_;
  std::shared_ptr<cache::Indexer> rs_index_ = NewTestIndexer();
  std::shared_ptr<cache::Indexer> pod_index_ = NewTestIndexer();
  std::shared_ptr<FakeReplicaSetClient> rs_client_ = std::make_shared<FakeReplicaSetClient>();
  std::shared_ptr<controller::testing::FakePodControl> pod_control_ =
      std::make_shared<controller::testing::FakePodControl>();
  std::unique_ptr<ReplicaSetController> controller_;
  runtime::Queue queue_{workqueue::RateLimitingQueueConfig{.clock = &clock_}};
};

}  // namespace kcm::replicaset::testing
