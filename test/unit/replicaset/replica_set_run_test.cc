// ReplicaSetController::Run end to end over pkg/runtime with scripted ListerWatchers behind a real
// SharedInformerFactory: workers start once both caches synced, the queue is
// named "replicaset", pod ADDED events arriving by WATCH satisfy the creation expectations.
#include <gtest/gtest.h>

#include <thread>

#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/metrics/metrics.h"
#include "test/unit/replicaset/fixtures.h"

namespace kcm::replicaset::testing {
namespace {

using mocks::FakeListerWatcher;
using mocks::WaitUntil;

TEST(ReplicaSetControllerRunTest, SyncsThroughInformersAndRuntimeQueue) {
  const api::Time now = std::chrono::system_clock::now();
  auto rs_lw = std::make_shared<FakeListerWatcher>();
  auto pod_lw = std::make_shared<FakeListerWatcher>();
  rs_lw->ScriptList({NewReplicaSet("rs", 2)}, "10");
  pod_lw->ScriptList({}, "10");
  informers::SharedInformerFactory factory(
      [&](const informers::ResourceType& r, const api::ShardSelector*)
          -> std::shared_ptr<cache::ListerWatcher> { return r.name == "pods" ? pod_lw : rs_lw; },
      0s);
  auto pod_control = std::make_shared<controller::testing::FakePodControl>();
  auto rs_client = std::make_shared<FakeReplicaSetClient>();
  ReplicaSetController c(factory.ReplicaSets(), factory.Pods(), rs_client, pod_control,
                         {.concurrent_replicaset_syncs = 2});
  std::stop_source stop;
  std::jthread run([&] { EXPECT_TRUE(c.Run(stop.get_token()).ok()); });
  factory.Start(stop.get_token());

  ASSERT_TRUE(WaitUntil([&] { return pod_control->CreateCallCount() == 2; }));
  EXPECT_NE(metrics::SerializeText().find("workqueue_adds_total{name=\"replicaset\"}"),
            std::string::npos);

  auto watch = pod_lw->WaitForOpenedWatch(0);
  ASSERT_NE(watch, nullptr);
  for (const char* name : {"rs-a", "rs-b"}) {
    auto pod = NewPod(name, {.owner = "rs", .app = "rs", .resource_version = "11"}, now);
    watch->Push(api::WatchEventType::kAdded, pod);
  }
  ASSERT_TRUE(WaitUntil([&] {
    auto writes = rs_client->StatusWrites();
    return !writes.empty() && writes.back().status.replicas == 2;
  }));
  // The informer updates its store before it calls the handlers, so a sync may count both pods
  // (and write replicas=2) before the second pod's handler has observed its creation.
  EXPECT_TRUE(WaitUntil([&] { return c.expectations().SatisfiedExpectations("ns/rs"); }));
  EXPECT_EQ(pod_control->CreateCallCount(), 2) << "no creates beyond the two observed";
  stop.request_stop();
  run.join();
  factory.Shutdown();
}

}  // namespace
}  // namespace kcm::replicaset::testing
