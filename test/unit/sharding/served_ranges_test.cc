// ServedRanges on a shard-sourced informer factory of fakes: a range gained opens the fence and
// adds its sources pods first, each synced before the next; a range lost closes the fence (after
// the writes in flight) and only then leaves the caches; a range kept is not listed again.
#include "pkg/sharding/served_ranges.h"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <mutex>

#include "pkg/api/pod.h"
#include "pkg/api/replicaset.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::sharding {
namespace {

using namespace std::chrono_literals;
using mocks::FakeListerWatcher;
using mocks::WaitUntil;

template <typename T>
api::ObjectPtr Make(std::string ns, std::string name) {
  auto obj = std::make_shared<T>();
  obj->metadata.namespace_ = std::move(ns);
  obj->metadata.name = std::move(name);
  obj->metadata.resource_version = "5";
  return obj;
}

api::ShardRange Only(std::string_view ns) {
  const uint64_t h = api::ShardHash(ns);
  return {h, h};
}

// One FakeListerWatcher per informer and shard ("pods a" for namespace a's range).
class Sources {
 public:
  std::shared_ptr<FakeListerWatcher> For(const std::string& name) {
    std::lock_guard lock(mu_);
    auto& lw = lws_[name];
    if (!lw) lw = std::make_shared<FakeListerWatcher>();
    return lw;
  }
  informers::SharedInformerFactory::ListerWatcherFactory Factory(
      std::map<uint64_t, std::string> names) {
    return [this, names](const informers::ResourceType& r, const api::ShardSelector* shard) {
      const std::string ns = shard ? names.at(shard->ranges().at(0).first) : "";
      return std::shared_ptr<cache::ListerWatcher>(For(r.name + " " + ns));
    };
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<FakeListerWatcher>> lws_;
};

class ServedRangesTest : public ::testing::Test {
 protected:
  ServedRangesTest() {
    factory_->Start(stop_.get_token());
    served_ = std::make_unique<ServedRanges>(
        *factory_, fence_, controllers_, [this](Error e) { failures_.push_back(e.ToString()); });
  }
  ~ServedRangesTest() override {
    served_.reset();
    factory_->Shutdown();
  }

  std::unique_ptr<informers::SharedInformerFactory> MakeFactory() {
    informers::SharedInformerFactoryOptions fo;
    fo.shard_sources = true;
    fo.shard_source_order = {"pods", "replicasets.apps"};
    fo.clock = &clock_;
    return std::make_unique<informers::SharedInformerFactory>(
        sources_.Factory({{Only("a").first, "a"}, {Only("b").first, "b"}}), 0s, fo);
  }

  FakeClock clock_;
  Sources sources_;
  std::stop_source stop_;
  std::unique_ptr<informers::SharedInformerFactory> factory_ = MakeFactory();
  informers::TypedInformer<api::Pod> pods_ = factory_->Pods();
  informers::TypedInformer<api::ReplicaSet> rs_ = factory_->ReplicaSets();
  std::shared_ptr<controller::NamespaceFence> fence_ =
      std::make_shared<controller::NamespaceFence>();
  std::stop_source controllers_;
  std::vector<std::string> failures_;
  std::unique_ptr<ServedRanges> served_;
};

TEST_F(ServedRangesTest, AGainedRangeIsOpenAndListsItsPodsBeforeItsReplicaSets) {
  auto pods_a = sources_.For("pods a");
  pods_a->ScriptList(Error{500, "InternalError", "not yet", {}});
  pods_a->ScriptList({Make<api::Pod>("a", "p")}, "5");
  sources_.For("replicasets.apps a")->ScriptList({Make<api::ReplicaSet>("a", "r")}, "5");
  served_->Reconcile({Only("a")});
  EXPECT_TRUE(fence_->IsOpen("a")) << "open from the start: the previous owner has stopped";
  EXPECT_FALSE(fence_->IsOpen("b"));
  // The pods' source backs off after its failed list; AddShard polls for its sync.
  ASSERT_TRUE(clock_.WaitForWaiters(2));
  EXPECT_EQ(sources_.For("replicasets.apps a")->num_lists(), 0u)
      << "no ReplicaSet before its pods are cached";
  clock_.Step(2s);
  ASSERT_TRUE(WaitUntil([&] { return rs_.lister.List().size() == 1; }));
  EXPECT_EQ(pods_.lister.List().size(), 1u);
  EXPECT_TRUE(failures_.empty());
}

TEST_F(ServedRangesTest, ALostRangeIsClosedAfterItsWritesAndLeavesTheCaches) {
  sources_.For("pods a")->ScriptList({Make<api::Pod>("a", "p")}, "5");
  sources_.For("pods b")->ScriptList({Make<api::Pod>("b", "q")}, "5");
  served_->Reconcile({Only("a"), Only("b")});
  ASSERT_TRUE(WaitUntil([&] { return pods_.lister.List().size() == 2; }));

  auto in_flight = std::make_unique<controller::NamespaceFence::Admission>(*fence_->Admit("a"));
  auto stopped = std::async(std::launch::async, [&] { served_->Reconcile({Only("b")}); });
  ASSERT_TRUE(WaitUntil([&] { return !fence_->IsOpen("a"); }));
  EXPECT_TRUE(in_flight->token().stop_requested()) << "the write in flight is cancelled";
  EXPECT_EQ(stopped.wait_for(50ms), std::future_status::timeout) << "and answered before the stop";
  EXPECT_EQ(pods_.lister.List().size(), 2u) << "the caches wait for the writes";
  in_flight.reset();
  stopped.get();
  ASSERT_EQ(pods_.lister.List().size(), 1u);
  EXPECT_EQ(pods_.lister.List()[0]->metadata.namespace_, "b");
  EXPECT_TRUE(fence_->IsOpen("b"));
  EXPECT_EQ(sources_.For("pods b")->num_lists(), 1u) << "the range kept is not listed again";

  EXPECT_FALSE(controllers_.stop_requested());
  served_->StopForGood();
  EXPECT_TRUE(controllers_.stop_requested()) << "the controllers' writes end, all of them";
  served_->StopAll();
  EXPECT_FALSE(fence_->IsOpen("b"));
  EXPECT_TRUE(pods_.lister.List().empty());
}

}  // namespace
}  // namespace kcm::sharding
