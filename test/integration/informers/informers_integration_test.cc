// The informer stack (SharedInformerFactory → ResourceListerWatcher → pkg/client → Reflector →
// DeltaFIFO → Indexer) against the shared testbed's kube-apiserver: an initial paged LIST of
// 2,000 pods followed by WATCH, and a storm of 5,000 concurrent writes. In both the cache must
// end equal to a fresh LIST (names and resourceVersions). Each test uses its own namespace.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "pkg/cache/pager.h"
#include "pkg/informers/shared_informer_factory.h"
#include "test/integration/framework/testenv.h"
#include "test/integration/informers/informer_testing.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using namespace kcm::informers::testing;

auto* const kEnv = testenv::RegisterTestbed({});

std::shared_ptr<client::RestClient> Admin() {
  auto c = AdminClient(kEnv->info().server, kEnv->info().ca_file, kEnv->info().admin_token);
  EXPECT_NE(c, nullptr);
  return c;
}

class InformersIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    KCM_REQUIRE_TESTBED();
    client_ = Admin();
    ASSERT_NE(client_, nullptr);
    ns_ = UniqueName("inf");
    ASSERT_TRUE(CreateNamespace(client_, ns_).ok());
  }
  void TearDown() override {
    if (client_) DeleteNamespace(client_, ns_);
  }

  std::shared_ptr<client::RestClient> client_;
  std::string ns_;
};

// 2.2, 2.4, 2.5, 1.9, 6.1: 2,000 pods exist before the informer starts; a quorum LIST through
// the adapter comes in pages of 500; the informer's first LIST (RV "0", limit 500: the watch
// cache decides whether to page) fills the cache; then creates, updates and deletes arrive by
// WATCH.
TEST_F(InformersIntegration, InitialListThenWatchMatchesFreshList) {
  constexpr int kPods = 2000;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(CreatePods(client_, ns_, "pre", kPods, 8).ok());
  const auto created = std::chrono::steady_clock::now();

  // 1.9 through the adapter: a quorum LIST (RV "") is paginated by etcd, 500 per page.
  {
    auto rc = std::make_shared<client::ResourceClient>(client_, kPodsGvr, true);
    ResourceListerWatcher lw(rc, ns_, api::PodCodec());
    auto paged = cache::ListAllPages(lw, {}, cache::kDefaultPageSize, {});
    ASSERT_TRUE(paged.ok()) << paged.error().ToString();
    EXPECT_TRUE(paged->paginated);
    EXPECT_EQ(paged->items.size(), static_cast<size_t>(kPods));
  }

  SharedInformerFactoryOptions options;
  options.namespace_ = ns_;
  SharedInformerFactory factory(client_, 0s, options);
  auto pods = factory.Pods();
  std::stop_source stop;
  factory.Start(stop.get_token());
  auto synced = factory.WaitForCacheSync(stop.get_token());
  ASSERT_TRUE(synced["pods"]);
  const auto sync_done = std::chrono::steady_clock::now();
  // HasSynced means the first list is in the indexer: every pre-created pod is there.
  EXPECT_EQ(StoreVersions(*pods.informer->GetIndexer(), ns_).size(), static_cast<size_t>(kPods));

  // Changes after sync reach the cache through the watch.
  client::ResourceClient rc(client_, kPodsGvr, true);
  ASSERT_TRUE(CreatePods(client_, ns_, "post", 200, 4).ok());
  ASSERT_TRUE(ParallelFor(300, 4, [&](int i) -> Status {
                auto r = rc.Patch(ns_, "pre-" + std::to_string(i), client::PatchType::kMergePatch,
                                  AnnotationPatch("u" + std::to_string(i)));
                return r.ok() ? OkStatus() : Status(r.error());
              }).ok());
  ASSERT_TRUE(ParallelFor(300, 4, [&](int i) -> Status {
                auto r = rc.Delete(ns_, "pre-" + std::to_string(kPods - 1 - i),
                                   {.grace_period_seconds = 0});
                return r.ok() ? OkStatus() : Status(r.error());
              }).ok());

  auto fresh = FreshList(client_, kPodsGvr, ns_, api::PodCodec());
  ASSERT_TRUE(fresh.ok()) << fresh.error().ToString();
  ASSERT_EQ(fresh->size(), static_cast<size_t>(kPods + 200 - 300));
  Versions got;
  EXPECT_TRUE(WaitForStore(*pods.informer->GetIndexer(), ns_, *fresh, 60s, &got))
      << Diff(*fresh, got);
  factory.Shutdown();
  auto secs = [](auto d) { return std::chrono::duration<double>(d).count(); };
  std::printf("created %d pods in %.1fs; informer synced in %.2fs\n", kPods, secs(created - t0),
              secs(sync_done - created));
}

// A storm of 5,000 concurrent creates, updates and deletes of ConfigMaps (schema-less informer,
// api::GenericObject) while the informer watches: the cache ends equal to a fresh LIST.
TEST_F(InformersIntegration, WriteStormEndsEqualToFreshList) {
  constexpr int kObjects = 2000;  // creates
  constexpr int kUpdates = 2000;  // two per even-numbered object
  constexpr int kDeletes = 1000;  // every other object
  SharedInformerFactoryOptions options;
  options.namespace_ = ns_;
  SharedInformerFactory factory(client_, 0s, options);
  auto informer = factory.InformerFor(GenericResource(kConfigMapsGvr, true));
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(factory.WaitForCacheSync(stop.get_token())["generic:configmaps"]);

  client::ResourceClient rc(client_, kConfigMapsGvr, true);
  auto name = [](int i) { return "cm-" + std::to_string(i); };
  // One stream of work: creates, then updates and deletes interleaved by several threads, so
  // the watch sees bursts of every event type.
  std::atomic<int> failed{0};
  ASSERT_TRUE(ParallelFor(kObjects, 8, [&](int i) -> Status {
                auto r = rc.Create(ns_, ConfigMapManifest(name(i), "0"));
                if (!r.ok()) ++failed;
                return r.ok() ? OkStatus() : Status(r.error());
              }).ok());
  ASSERT_TRUE(ParallelFor(kUpdates + kDeletes, 8, [&](int i) -> Status {
                Result<std::string> r = std::string();
                if (i % 3 == 2) {
                  r = rc.Delete(ns_, name(2 * (i / 3) + 1));  // odd names, 1,000 of them
                } else {
                  const int target = (i / 3) * 2;  // even names, each updated twice
                  r = rc.Patch(ns_, name(target % kObjects), client::PatchType::kMergePatch,
                               R"({"data":{"v":")" + std::to_string(i) + R"("}})");
                }
                if (!r.ok()) ++failed;
                return r.ok() ? OkStatus() : Status(r.error());
              }).ok());
  EXPECT_EQ(failed.load(), 0);

  auto fresh = FreshList(client_, kConfigMapsGvr, ns_, api::GenericCodec());
  ASSERT_TRUE(fresh.ok()) << fresh.error().ToString();
  // Whatever the namespace holds besides ours (e.g. kube-root-ca.crt if a controller added it)
  // is in both.
  EXPECT_GE(fresh->size(), static_cast<size_t>(kObjects - kDeletes));
  Versions got;
  EXPECT_TRUE(WaitForStore(*informer->GetIndexer(), ns_, *fresh, 60s, &got)) << Diff(*fresh, got);
  factory.Shutdown();
}

}  // namespace
}  // namespace kcm::informers
