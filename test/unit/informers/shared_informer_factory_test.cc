// SharedInformerFactory (behaviour 6.1-6.3) and the typed listers, with scripted ListerWatchers
// from test/unit/cache/fakes.h.
#include "pkg/informers/shared_informer_factory.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/cache/resource_event_handler.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/client/api_errors.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using mocks::FakeListerWatcher;
using mocks::WaitUntil;

api::ObjectPtr MakePod(std::string ns, std::string name, std::string rv,
                       std::map<std::string, std::string> labels = {}) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.namespace_ = std::move(ns);
  pod->metadata.name = std::move(name);
  pod->metadata.resource_version = std::move(rv);
  pod->metadata.labels = std::move(labels);
  return pod;
}

api::ObjectPtr MakeReplicaSet(std::string ns, std::string name, std::string rv) {
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata.namespace_ = std::move(ns);
  rs->metadata.name = std::move(name);
  rs->metadata.resource_version = std::move(rv);
  return rs;
}

// Threads of this process as /proc/self/task lists them.
int TaskCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
  }
  return n;
}

// Threads of this process. pthread_join returns once the kernel has cleared the thread's tid,
// which comes before its entry leaves /proc/self/task, so a thread joined just now may still be
// listed: a count expected to have fallen back to `settled` is re-read until it has (up to 5 s),
// and the first call first starts and joins one thread and waits for it to go — sanitizer
// runtimes (TSan) start a background thread of their own at the first thread creation, which
// would otherwise show up as a thread the factory left behind.
int ThreadCount(int settled = -1) {
  static const bool runtime_threads_started = [] {
    pid_t tid = 0;
    std::thread([&tid] { tid = gettid(); }).join();
    const std::string entry = "/proc/self/task/" + std::to_string(tid);
    for (int i = 0; i < 500 && access(entry.c_str(), F_OK) == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }();
  (void)runtime_threads_started;
  int n = TaskCount();
  for (int i = 0; settled >= 0 && n != settled && i < 500; ++i) {
    std::this_thread::sleep_for(10ms);
    n = TaskCount();
  }
  return n;
}

// Hands out one FakeListerWatcher per resource name and counts how often each was asked for.
class FakeListerWatchers {
 public:
  std::shared_ptr<FakeListerWatcher> For(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& lw = lws_[name];
    if (!lw) lw = std::make_shared<FakeListerWatcher>();
    return lw;
  }
  int calls(const std::string& name) {
    std::lock_guard lock(mu_);
    return calls_[name];
  }
  SharedInformerFactory::ListerWatcherFactory Factory() {
    return [this](const ResourceType& r,
                  const api::ShardSelector* shard) -> std::shared_ptr<cache::ListerWatcher> {
      // A shard's source: "pods shardRange(…)".
      const std::string name = InformerKey(r) + (shard ? " " + shard->String() : "");
      {
        std::lock_guard lock(mu_);
        ++calls_[name];
      }
      return For(name);
    };
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<FakeListerWatcher>> lws_;
  std::map<std::string, int> calls_;
};

// 6.2: one informer per resource; its ListerWatcher is built once, by the first caller.
TEST(SharedInformerFactoryTest, OneInformerPerResource) {
  FakeListerWatchers lws;
  SharedInformerFactory factory(lws.Factory(), 0s);
  auto first = factory.InformerFor(PodsResource());
  EXPECT_EQ(first, factory.Pods().informer);
  EXPECT_EQ(first, factory.InformerFor(PodsResource()));
  EXPECT_EQ(lws.calls("pods"), 1);

  auto rs = factory.ReplicaSets().informer;
  EXPECT_NE(rs, first);
  EXPECT_EQ(rs, factory.ReplicaSets().informer);
  EXPECT_EQ(lws.calls("replicasets.apps"), 1);
  EXPECT_NE(factory.Deployments().informer, rs);
}

// A schema-less informer of a resource must not be handed out as the typed one (its objects are
// GenericObjects; a typed lister would cast them to api::Pod).
TEST(SharedInformerFactoryTest, GenericAndTypedInformersOfOneResourceAreSeparate) {
  FakeListerWatchers lws;
  SharedInformerFactory factory(lws.Factory(), 0s);
  auto generic = factory.InformerFor(GenericResource({"", "v1", "pods"}, true));
  auto typed = factory.Pods().informer;
  EXPECT_NE(generic, typed);
  EXPECT_EQ(InformerKey(GenericResource({"", "v1", "pods"}, true)), "generic:pods");
  EXPECT_EQ(InformerKey(PodsResource()), "pods");
  EXPECT_EQ(generic, factory.InformerFor(GenericResource({"", "v1", "pods"}, true)));
}

// 6.1: a transform configured for a resource prunes what reaches the cache.
TEST(SharedInformerFactoryTest, TransformIsApplied) {
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList({MakePod("ns", "a", "5")}, "5");
  SharedInformerFactoryOptions options;
  options.transforms["pods"] = [](api::ObjectPtr obj) -> Result<api::ObjectPtr> {
    auto copy = std::make_shared<api::Pod>(static_cast<const api::Pod&>(*obj));
    copy->node_name = "transformed";
    return api::ObjectPtr(copy);
  };
  SharedInformerFactory factory(lws.Factory(), 0s, options);
  auto pods = factory.Pods();
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return pods.informer->HasSynced(); }));
  auto got = pods.lister.ByNamespace("ns").Get("a");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ((*got)->node_name, "transformed");
  // A resource without a transform is cached as listed.
  lws.For("replicasets.apps")->ScriptList({MakeReplicaSet("ns", "r", "6")}, "6");
  auto rs = factory.ReplicaSets();
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return rs.informer->HasSynced(); }));
  EXPECT_EQ(rs.lister.List().size(), 1u);
  factory.Shutdown();
}

// The one shard of exactly namespace `ns`.
api::ShardSelector OnlyNamespace(const std::string& ns) {
  const uint64_t h = api::ShardHash(ns);
  return api::ShardSelector(api::ShardField::kNamespace, {api::ShardRange{h, h}});
}

// With shard sources, a namespaced informer holds what its shards list: each shard a source of
// its own, given to informers made before and after it, removed with its objects.
TEST(SharedInformerFactoryTest, ShardsAreSourcesOfEveryNamespacedInformer) {
  FakeListerWatchers lws;
  SharedInformerFactoryOptions options;
  options.shard_sources = true;
  SharedInformerFactory factory(lws.Factory(), 0s, options);
  auto pods = factory.Pods();
  const api::ShardSelector a = OnlyNamespace("a");
  const api::ShardSelector b = OnlyNamespace("b");
  lws.For("pods " + a.String())->ScriptList({MakePod("a", "x", "5")}, "5");
  lws.For("pods " + b.String())->ScriptList({MakePod("b", "y", "6")}, "6");
  lws.For("replicasets.apps " + b.String())->ScriptList({MakeReplicaSet("b", "r", "7")}, "7");
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(factory.AddShard("a", a).ok());
  ASSERT_TRUE(factory.AddShard("b", b).ok());
  EXPECT_FALSE(factory.AddShard("b", b).ok()) << "name taken";
  ASSERT_TRUE(WaitUntil([&] { return pods.informer->HasSynced(); }));
  EXPECT_EQ(pods.lister.List().size(), 2u);
  EXPECT_EQ(lws.calls("pods"), 0) << "no lister-watcher of its own";

  auto rs = factory.ReplicaSets();  // made after the shards: gets both as sources
  EXPECT_EQ(lws.calls("replicasets.apps " + a.String()), 1);
  EXPECT_EQ(lws.calls("replicasets.apps " + b.String()), 1);
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return rs.informer->HasSynced(); }));
  EXPECT_EQ(rs.lister.List().size(), 1u);

  ASSERT_TRUE(factory.RemoveShard("b").ok());
  EXPECT_TRUE(rs.lister.List().empty());
  ASSERT_EQ(pods.lister.List().size(), 1u);
  EXPECT_EQ(pods.lister.List()[0]->Meta().name, "x");
  EXPECT_FALSE(factory.RemoveShard("b").ok()) << "removed already";
  factory.Shutdown();
  EXPECT_FALSE(factory.AddShard("c", OnlyNamespace("c")).ok()) << "shut down";

  SharedInformerFactory unsharded(lws.Factory(), 0s);
  EXPECT_FALSE(unsharded.AddShard("a", a).ok());
}

// 6.2: resync = the resource's custom period, else the factory default. A FakeClock makes it
// exact: after 1 min only pods (custom 1 min) resync; replicasets (default 10 min) wait.
TEST(SharedInformerFactoryTest, CustomResyncPerResourceElseDefault) {
  FakeClock clock;
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList({MakePod("ns", "a", "5")}, "5");
  lws.For("replicasets.apps")->ScriptList({MakeReplicaSet("ns", "r", "6")}, "6");
  SharedInformerFactoryOptions options;
  options.custom_resync["pods"] = 1min;
  options.clock = &clock;
  SharedInformerFactory factory(lws.Factory(), 10min, options);

  std::atomic<int> pod_resyncs{0}, rs_resyncs{0};
  auto counter = [](std::atomic<int>& n) {
    cache::ResourceEventHandlerFuncs f;
    f.update_func = [&n](const api::ObjectPtr& o, const api::ObjectPtr& nw) {
      if (o->Meta().resource_version == nw->Meta().resource_version) ++n;
    };
    return f;
  };
  auto pods = factory.Pods().informer;
  auto rs = factory.ReplicaSets().informer;
  ASSERT_TRUE(pods->AddEventHandler(counter(pod_resyncs)).ok());
  ASSERT_TRUE(rs->AddEventHandler(counter(rs_resyncs)).ok());
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return pods->HasSynced() && rs->HasSynced(); }));
  // Both resync timers asleep on the clock (the watches block on their fake streams).
  ASSERT_TRUE(clock.WaitForWaiters(2));

  clock.Step(1min);
  ASSERT_TRUE(WaitUntil([&] { return pod_resyncs.load() >= 1; }));
  ASSERT_TRUE(clock.WaitForWaiters(2));
  EXPECT_EQ(rs_resyncs.load(), 0);

  clock.Step(9min);
  ASSERT_TRUE(WaitUntil([&] { return rs_resyncs.load() >= 1; }));
  factory.Shutdown();
}

// 6.3: Start again starts only informers added since; WaitForCacheSync reports per type.
TEST(SharedInformerFactoryTest, StartTwiceStartsOnlyNewInformers) {
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList({MakePod("ns", "a", "5")}, "5");
  SharedInformerFactory factory(lws.Factory(), 0s);
  auto pods = factory.Pods().informer;
  std::stop_source stop;
  factory.Start(stop.get_token());
  auto synced = factory.WaitForCacheSync(stop.get_token());
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"pods", true}}));
  // The pod informer is watching: one list, one watch.
  lws.For("pods")->WaitForOpenedWatch(0);
  EXPECT_EQ(lws.For("pods")->num_lists(), 1u);

  lws.For("replicasets.apps")->ScriptList({MakeReplicaSet("ns", "r", "6")}, "6");
  factory.ReplicaSets();
  factory.Start(stop.get_token());
  synced = factory.WaitForCacheSync(stop.get_token());
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"pods", true}, {"replicasets.apps", true}}));
  lws.For("replicasets.apps")->WaitForOpenedWatch(0);
  // A second Run of the pod informer would have listed again.
  EXPECT_EQ(lws.For("pods")->num_lists(), 1u);
  EXPECT_EQ(lws.For("pods")->num_watches(), 1u);
  EXPECT_EQ(lws.For("replicasets.apps")->num_lists(), 1u);
  factory.Shutdown();
}

// 6.3 / 4.7: an informer that cannot sync reports false once the caller's stop is requested.
TEST(SharedInformerFactoryTest, WaitForCacheSyncFalseWhenStoppedFirst) {
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList({MakePod("ns", "a", "5")}, "5");
  for (int i = 0; i < 100; ++i) {
    lws.For("deployments.apps")->ScriptList(Error{403, "Forbidden", "no", {}});
  }
  SharedInformerFactory factory(lws.Factory(), 0s);
  factory.Pods();
  factory.Deployments();
  std::stop_source run;
  factory.Start(run.get_token());
  ASSERT_TRUE(WaitUntil([&] { return factory.Pods().informer->HasSynced(); }));
  std::stop_source wait;
  wait.request_stop();
  auto synced = factory.WaitForCacheSync(wait.get_token());
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"deployments.apps", false}, {"pods", true}}));
  factory.Shutdown();
}

// A ListerWatcher whose List waits until the test releases it; entered() tells that the reflector
// is inside List (not asleep on a clock).
class GatedListerWatcher final : public cache::ListerWatcher {
 public:
  explicit GatedListerWatcher(std::shared_ptr<FakeListerWatcher> inner)
      : inner_(std::move(inner)) {}
  Result<api::ObjectList> List(const api::ListOptions& options) override {
    std::unique_lock lock(mu_);
    entered_ = true;
    cv_.wait(lock, [&] { return released_; });
    lock.unlock();
    return inner_->List(options);
  }
  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions& options) override {
    return inner_->Watch(options);
  }
  bool entered() {
    std::lock_guard lock(mu_);
    return entered_;
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<FakeListerWatcher> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false;
  bool released_ = false;
};

// 4.7: WaitForCacheSync answers when the cache syncs, not at its next 100 ms poll: on a clock that
// never moves the poll never comes, so only the informer's store-sync wake-up can end the wait.
TEST(SharedInformerFactoryTest, WaitForCacheSyncWakesWhenTheCacheSyncs) {
  FakeClock clock;
  auto inner = std::make_shared<FakeListerWatcher>();
  inner->ScriptList({MakePod("ns", "a", "5"), MakePod("ns", "b", "5")}, "5");
  auto gated = std::make_shared<GatedListerWatcher>(inner);
  SharedInformerFactoryOptions options;
  options.clock = &clock;
  SharedInformerFactory factory(
      [gated](const ResourceType&, const api::ShardSelector*) { return gated; }, 0s, options);
  auto pods = factory.Pods().informer;
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return gated->entered(); }));
  const int others = clock.Waiters();
  std::atomic<bool> done{false};
  std::map<std::string, bool> synced;
  std::thread waiter([&] {
    synced = factory.WaitForCacheSync(stop.get_token());
    done = true;
  });
  // The waiter found the cache not synced (the list is held) and sleeps on the clock.
  ASSERT_TRUE(clock.WaitForWaiters(others + 1));
  EXPECT_FALSE(pods->HasSynced());
  gated->Release();
  const bool woke = WaitUntil([&] { return done.load(); });
  if (!woke) stop.request_stop();  // let the waiter end before failing
  waiter.join();
  EXPECT_TRUE(woke) << "WaitForCacheSync slept past the sync";
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"pods", true}}));
  EXPECT_EQ(pods->GetIndexer()->ListKeys().size(), 2u);
  factory.Shutdown();
}

// Informers not started are not waited for, and Shutdown ends a wait that would never succeed.
TEST(SharedInformerFactoryTest, ShutdownEndsWaitForCacheSync) {
  FakeListerWatchers lws;
  for (int i = 0; i < 100; ++i) {
    lws.For("pods")->ScriptList(Error{403, "Forbidden", "no", {}});
  }
  SharedInformerFactory factory(lws.Factory(), 0s);
  factory.Pods();
  EXPECT_TRUE(factory.WaitForCacheSync({}).empty());
  factory.Start({});
  std::map<std::string, bool> synced;
  std::thread waiter([&] { synced = factory.WaitForCacheSync({}); });
  ASSERT_TRUE(WaitUntil([&] { return lws.For("pods")->num_lists() >= 1; }));
  factory.Shutdown();
  waiter.join();
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"pods", false}}));
}

// 6.3: Shutdown stops and joins every informer thread, and may be called again (and by the
// destructor). Start after Shutdown starts nothing.
TEST(SharedInformerFactoryTest, ShutdownJoinsEveryThreadAndIsIdempotent) {
  const int before = ThreadCount();
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList({MakePod("ns", "a", "5")}, "5");
  lws.For("replicasets.apps")->ScriptList({MakeReplicaSet("ns", "r", "6")}, "6");
  {
    SharedInformerFactory factory(lws.Factory(), 0s);
    auto pods = factory.Pods().informer;
    auto rs = factory.ReplicaSets().informer;
    ASSERT_TRUE(pods->AddEventHandler(cache::ResourceEventHandlerFuncs{}).ok());
    std::stop_source stop;
    factory.Start(stop.get_token());
    ASSERT_TRUE(WaitUntil([&] { return pods->HasSynced() && rs->HasSynced(); }));
    EXPECT_GT(ThreadCount(), before);
    factory.Shutdown();
    EXPECT_EQ(ThreadCount(before), before);
    EXPECT_TRUE(pods->IsStopped());
    EXPECT_TRUE(rs->IsStopped());
    factory.Shutdown();
    factory.Deployments();
    factory.Start(stop.get_token());
    EXPECT_EQ(ThreadCount(before), before);
    EXPECT_EQ(lws.For("deployments.apps")->num_lists(), 0u);
  }
  EXPECT_EQ(ThreadCount(before), before);
}

// The caller's stop token stops the informers too; Shutdown then only joins.
TEST(SharedInformerFactoryTest, CallersStopStopsInformers) {
  const int before = ThreadCount();
  FakeListerWatchers lws;
  SharedInformerFactory factory(lws.Factory(), 0s);
  auto pods = factory.Pods().informer;
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return pods->HasSynced(); }));
  stop.request_stop();
  ASSERT_TRUE(WaitUntil([&] { return pods->IsStopped(); }));
  factory.Shutdown();
  EXPECT_EQ(ThreadCount(before), before);
}

// Typed listers: Get by namespace (NotFound when absent), List with a selector, across and
// within namespaces.
TEST(TypedListerTest, GetAndListWithSelector) {
  FakeListerWatchers lws;
  lws.For("pods")->ScriptList(
      {MakePod("a", "web-1", "5", {{"app", "web"}}), MakePod("a", "db-1", "6", {{"app", "db"}}),
       MakePod("b", "web-1", "7", {{"app", "web"}})},
      "7");
  SharedInformerFactory factory(lws.Factory(), 0s);
  auto pods = factory.Pods();
  std::stop_source stop;
  factory.Start(stop.get_token());
  ASSERT_TRUE(WaitUntil([&] { return pods.informer->HasSynced(); }));

  auto got = pods.lister.ByNamespace("b").Get("web-1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)->metadata.resource_version, "7");
  auto missing = pods.lister.ByNamespace("b").Get("db-1");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(errors::IsNotFound(missing.error())) << missing.error().ToString();
  EXPECT_EQ(missing.error().code, 404);

  auto web = api::labels::Selector::FromSet({{"app", "web"}});
  cache::Selector is_web = [&web](const api::Object& o) { return web.Matches(o.Meta().labels); };
  EXPECT_EQ(pods.lister.List().size(), 3u);
  EXPECT_EQ(pods.lister.List(is_web).size(), 2u);
  auto in_a = pods.lister.ByNamespace("a").List(is_web);
  ASSERT_EQ(in_a.size(), 1u);
  EXPECT_EQ(in_a[0]->metadata.name, "web-1");
  EXPECT_EQ(in_a[0]->metadata.namespace_, "a");
  EXPECT_TRUE(pods.lister.ByNamespace("c").List().empty());
  factory.Shutdown();
}

}  // namespace
}  // namespace kcm::informers
