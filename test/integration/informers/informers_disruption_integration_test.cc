// The informer stack through disruptions of the control plane: an etcd compaction while the
// informer's watch is down (410 → relist, behaviour 2.3/2.4) and a kube-apiserver restart
// mid-watch. Both restart the API server, so this binary runs its own private testbed rather than
// the shared one (other tests would see their connections refused).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "pkg/informers/shared_informer_factory.h"
#include "test/integration/framework/testenv.h"
#include "test/integration/informers/informer_testing.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using namespace kcm::informers::testing;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 1});

testenv::CommandResult RestartApiServer() {
  return testenv::RunCommand({testenv::SourceDir() + "/hack/testbed", "restart-apiserver"}, 180s,
                             "", {{"KCM_TESTBED_DIR", kEnv->info().dir}});
}

class InformersDisruption : public ::testing::Test {
 protected:
  void SetUp() override {
    KCM_REQUIRE_TESTBED();
    client_ = AdminClient(kEnv->info().server, kEnv->info().ca_file, kEnv->info().admin_token);
    ASSERT_NE(client_, nullptr);
    ns_ = UniqueName("infd");
    ASSERT_TRUE(CreateNamespace(client_, ns_).ok());
  }
  void TearDown() override {
    if (client_) DeleteNamespace(client_, ns_);
  }

  // A pod informer whose ListerWatcher is observed (and can be held down) by the test.
  std::unique_ptr<SharedInformerFactory> Factory(std::shared_ptr<ObservedListerWatcher>* lw) {
    SharedInformerFactoryOptions options;
    options.namespace_ = ns_;
    auto c = client_;
    auto ns = ns_;
    return std::make_unique<SharedInformerFactory>(
        [c, ns, lw](const ResourceType& r,
                    const api::ShardSelector*) -> std::shared_ptr<cache::ListerWatcher> {
          auto rc = std::make_shared<client::ResourceClient>(c, r.gvr, r.namespaced);
          *lw = std::make_shared<ObservedListerWatcher>(
              std::make_shared<ResourceListerWatcher>(rc, ns, *r.codec));
          return *lw;
        },
        0s, options);
  }

  // Patches pods p-0 … p-(updates-1) and deletes `deletes` pods counting down from p-(total-1).
  void Churn(const std::string& round, int updates, int deletes, int total) {
    client::ResourceClient rc(client_, kPodsGvr, true);
    ASSERT_TRUE(ParallelFor(updates, 4, [&](int i) -> Status {
                  auto r = rc.Patch(ns_, "p-" + std::to_string(i), client::PatchType::kMergePatch,
                                    AnnotationPatch(round));
                  return r.ok() ? OkStatus() : Status(r.error());
                }).ok());
    ASSERT_TRUE(ParallelFor(deletes, 4, [&](int i) -> Status {
                  auto r = rc.Delete(ns_, "p-" + std::to_string(total - 1 - i),
                                     {.grace_period_seconds = 0});
                  return r.ok() || errors::IsNotFound(r.error()) ? OkStatus() : Status(r.error());
                }).ok());
  }

  std::shared_ptr<client::RestClient> client_;
  std::string ns_;
};

// 2.3/2.4: while the informer's watch is down, pods are updated, deleted and created and etcd is
// compacted past the informer's resourceVersion; the API server is restarted so its watch cache
// no longer holds that resourceVersion either. The resumed watch gets 410 Expired, the reflector
// relists, and the cache ends equal to a fresh LIST: deleted pods gone (DeletedFinalStateUnknown
// from Replace), updated pods at their last resourceVersion, new pods present.
TEST_F(InformersDisruption, CompactionWhileWatchIsDownForcesRelist) {
  constexpr int kPods = 500;
  ASSERT_TRUE(CreatePods(client_, ns_, "p", kPods, 8).ok());
  std::shared_ptr<ObservedListerWatcher> lw;
  auto factory = Factory(&lw);
  auto pods = factory->Pods();
  std::atomic<int> deleted_seen{0};
  ASSERT_TRUE(pods.informer
                  ->AddEventHandler(cache::ResourceEventHandlerFuncs{
                      .delete_func = [&deleted_seen](const api::ObjectPtr&) { ++deleted_seen; }})
                  .ok());
  std::stop_source stop;
  factory->Start(stop.get_token());
  ASSERT_TRUE(factory->WaitForCacheSync(stop.get_token())["pods"]);
  ASSERT_EQ(lw->lists(), 1);

  // A watch that has lasted over a second closes "cleanly" when cut: the reflector re-watches
  // from its last RV without relisting, and that re-watch is what we hold.
  std::this_thread::sleep_for(1500ms);
  lw->HoldAndCut();
  const int watches_before = lw->watches();

  Churn("down", 100, 100, kPods);
  ASSERT_TRUE(CreatePods(client_, ns_, "new", 50, 4).ok());
  std::string rv;
  auto fresh = FreshList(client_, kPodsGvr, ns_, api::PodCodec(), &rv);
  ASSERT_TRUE(fresh.ok()) << fresh.error().ToString();
  auto compact = kEnv->Etcdctl({"compact", rv});
  ASSERT_TRUE(compact.ok() || compact.err.find("compacted") != std::string::npos)
      << compact.Describe();
  auto restarted = RestartApiServer();
  ASSERT_TRUE(restarted.ok()) << restarted.Describe();

  lw->Release();
  Versions got;
  EXPECT_TRUE(WaitForStore(*pods.informer->GetIndexer(), ns_, *fresh, 120s, &got))
      << Diff(*fresh, got);
  EXPECT_GE(lw->expired(), 1) << "the resumed watch was not answered 410";
  EXPECT_GE(lw->lists(), 2) << "no relist after 410";
  EXPECT_GT(lw->watches(), watches_before);
  // Every deleted pod was reported to handlers (as a tombstone from the relist's Replace).
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (deleted_seen.load() < 100 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(deleted_seen.load(), 100);
  factory->Shutdown();
}

// 2.4: kube-apiserver restarted under a running informer: the watch breaks, connections are
// refused for a while (retriable: back off, re-watch), and the informer converges again with
// changes made before and after the restart.
TEST_F(InformersDisruption, ApiServerRestartMidWatchRecovers) {
  constexpr int kPods = 500;
  ASSERT_TRUE(CreatePods(client_, ns_, "p", kPods, 8).ok());
  std::shared_ptr<ObservedListerWatcher> lw;
  auto factory = Factory(&lw);
  auto pods = factory->Pods();
  std::stop_source stop;
  factory->Start(stop.get_token());
  ASSERT_TRUE(factory->WaitForCacheSync(stop.get_token())["pods"]);
  const int watches_before = lw->watches();

  Churn("before", 50, 50, kPods);
  auto restarted = RestartApiServer();
  ASSERT_TRUE(restarted.ok()) << restarted.Describe();
  Churn("after", 100, 50, kPods - 50);
  ASSERT_TRUE(CreatePods(client_, ns_, "new", 50, 4).ok());

  auto fresh = FreshList(client_, kPodsGvr, ns_, api::PodCodec());
  ASSERT_TRUE(fresh.ok()) << fresh.error().ToString();
  ASSERT_EQ(fresh->size(), static_cast<size_t>(kPods - 100 + 50));
  Versions got;
  EXPECT_TRUE(WaitForStore(*pods.informer->GetIndexer(), ns_, *fresh, 120s, &got))
      << Diff(*fresh, got);
  EXPECT_GT(lw->watches(), watches_before) << "the informer never re-watched";
  factory->Shutdown();
}

}  // namespace
}  // namespace kcm::informers
