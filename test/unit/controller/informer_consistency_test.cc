// InformerConsistency: the ConsistencyStore of a controller's informers, woken by their
// store-sync listeners.
#include "pkg/controller/informer_consistency.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::controller {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::FakeListerWatcher;
using ::kcm::mocks::FakeWatch;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::WaitUntil;

// An informer listed at resourceVersion 1 with a scripted watch after it, running.
struct RunningInformer {
  explicit RunningInformer(FakeClock* clock) {
    lw->ScriptList({MakeObj("ns", "a", "1")}, "1");
    watch = lw->ScriptWatch();
    informer = std::make_shared<cache::SharedIndexInformer>(
        lw,
        cache::SharedIndexInformerOptions{
            .name = "test", .expected_kind = "Fake", .clock = clock, .rand = [] { return 0.5; }});
    runner = std::jthread([this](std::stop_token st) { informer->Run(st); });
  }
  ~RunningInformer() {
    runner.request_stop();
    runner.join();
  }
  std::shared_ptr<FakeListerWatcher> lw = std::make_shared<FakeListerWatcher>();
  std::shared_ptr<FakeWatch> watch;
  std::shared_ptr<cache::SharedIndexInformer> informer;
  std::jthread runner;
};

class Owners {
 public:
  ConsistencyStore::ReadySink Sink() {
    return [this](const std::string& owner) {
      std::lock_guard lock(mu_);
      seen_.push_back(owner);
    };
  }
  std::vector<std::string> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> seen_;
};

// A write the pod cache has not applied makes its owner wait (upstream's consistencyStore,
// EnsureReady against the informer's LastStoreSyncResourceVersion); the pod informer's watermark
// passing it hands the owner to the sink, through the listener, with nobody polling.
TEST(InformerConsistencyTest, AnInformersWatermarkWakesTheOwnersWaitingForIt) {
  FakeClock clock;
  RunningInformer rs(&clock), pods(&clock);
  ASSERT_TRUE(WaitUntil([&] { return rs.informer->HasSynced() && pods.informer->HasSynced(); }));
  InformerConsistency consistency({}, {{"replicasets.apps", rs.informer}, {"pods", pods.informer}});
  ASSERT_TRUE(consistency);
  Owners owners;
  consistency->SetReadySink(owners.Sink());
  consistency->WroteAt("ns/web", "uid-1", "pods", "5");
  ASSERT_TRUE(consistency->EnsureReady("ns/web", /*wait=*/true).has_value());
  rs.watch->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "6"));
  pods.watch->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "4"));
  ASSERT_TRUE(WaitUntil([&] { return pods.informer->LastStoreSyncResourceVersion() == "4"; }));
  EXPECT_TRUE(owners.seen().empty());
  pods.watch->Push(api::WatchEventType::kModified, MakeObj("ns", "a", "5"));
  ASSERT_TRUE(WaitUntil([&] { return owners.seen().size() == 1; }));
  EXPECT_EQ(owners.seen(), std::vector<std::string>{"ns/web"});
  EXPECT_FALSE(consistency->EnsureReady("ns/web").has_value());
}

// Given getters (tests) win over the informers; an informer missing leaves no store; a moved-from
// one is empty and the moved-to one keeps the store.
TEST(InformerConsistencyTest, GettersWinAMissingInformerLeavesNoStoreAndMovesKeepTheStore) {
  FakeClock clock;
  RunningInformer pods(&clock);
  std::string rv = "7";
  InformerConsistency given({{"pods", [&rv](std::string_view) { return rv; }}},
                            {{"pods", pods.informer}});
  ASSERT_TRUE(given);
  given->WroteAt("ns/web", "uid-1", "pods", "8");
  EXPECT_TRUE(given->EnsureReady("ns/web").has_value());
  rv = "8";
  EXPECT_FALSE(given->EnsureReady("ns/web").has_value());

  EXPECT_FALSE(InformerConsistency({}, {{"pods", pods.informer}, {"replicasets.apps", nullptr}}));
  EXPECT_FALSE(InformerConsistency({}, {}));
  EXPECT_FALSE(InformerConsistency());

  InformerConsistency from({}, {{"pods", pods.informer}});
  ConsistencyStore* store = from.get();
  InformerConsistency to;
  to = std::move(from);
  EXPECT_FALSE(from);  // NOLINT(bugprone-use-after-move): a moved-from one is empty
  EXPECT_EQ(to.get(), store);
}

}  // namespace
}  // namespace kcm::controller
