// Test fixtures for the ReplicaSet controller's unit tests: listers over indexers the test fills,
// the recording FakeReplicaSetClient, FakePodControl and a FakeClock; objects from
// pkg/api/testing/objects.h. Test-only.
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
#include "pkg/api/testing/objects.h"
#include "pkg/cache/index.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/keys.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/testing/fake_pod_control.h"
#include "pkg/controller/testing/fake_typed_client.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::replicaset::testing {

using namespace std::chrono_literals;

using controller::testing::FakeReplicaSetClient;

inline std::shared_ptr<cache::Indexer> NewTestIndexer() {
  return cache::NewIndexer(cache::MetaNamespaceKeyFunc,
                           {{cache::kNamespaceIndex, cache::MetaNamespaceIndexFunc}});
}

using api::testing::NewPod;
using api::testing::NewReplicaSet;
using api::testing::PodOptions;

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
