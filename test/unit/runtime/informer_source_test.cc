// InformerSource: a controller fed by a real SharedIndexInformer over a scripted ListerWatcher.
#include "pkg/runtime/informer_source.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/runtime/controller.h"

namespace kcm::runtime {
namespace {

using mocks::FakeListerWatcher;
using mocks::MakeObj;
using mocks::WaitUntil;

TEST(InformerSourceTest, InitialListAndWatchEventsReachTheReconciler) {
  auto lw = std::make_shared<FakeListerWatcher>();
  lw->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "2")}, "10");
  cache::SharedIndexInformerOptions io;
  io.name = "items";
  auto informer = std::make_shared<cache::SharedIndexInformer>(lw, io);

  std::mutex mu;
  std::set<std::string> seen;
  auto rec = std::make_shared<ReconcilerFunc>([&](const Request& r, std::stop_token) {
    std::lock_guard lock(mu);
    seen.insert(r.Key());
    return Result<ReconcileResult>(Done());
  });
  ControllerOptions o;
  o.name = "informer-source-test";
  Controller ctrl(o, rec);
  ASSERT_TRUE(
      ctrl.Watch(std::make_shared<InformerSource>(informer), EnqueueRequestForObject()).ok());

  std::jthread informer_thread([&](std::stop_token st) { informer->Run(st); });
  std::jthread controller_thread([&](std::stop_token st) { (void)ctrl.Start(st); });

  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return seen == std::set<std::string>{"ns/a", "ns/b"};
  }));
  auto watch = lw->WaitForOpenedWatch(0);
  ASSERT_NE(watch, nullptr);
  watch->Push(api::WatchEventType::kAdded, MakeObj("other", "c", "11"));
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return seen.count("other/c") == 1;
  }));
  controller_thread.request_stop();
  controller_thread.join();
  informer_thread.request_stop();
  watch->Stop();
}

// The handlers of handler.h only map and enqueue, so they say NonBlocking and the informer calls
// them on its own thread (no listener thread in between); a handler of the user's own that does
// not say so keeps a listener thread of its own.
TEST(InformerSourceTest, EnqueueOnlyHandlersRunOnTheInformerThreadOthersOnTheirOwn) {
  auto lw = std::make_shared<FakeListerWatcher>();
  lw->ScriptList({MakeObj("ns", "a", "1")}, "10");
  auto informer =
      std::make_shared<cache::SharedIndexInformer>(lw, cache::SharedIndexInformerOptions{});

  class Custom final : public EventHandler {
   public:
    explicit Custom(std::function<void(const api::Object&)> f) : f_(std::move(f)) {}
    void Create(const CreateEvent& e, Queue&) override { f_(*e.object); }
    void Update(const UpdateEvent& e, Queue&) override { f_(*e.new_object); }
    void Delete(const DeleteEvent& e, Queue&) override { f_(*e.object); }
    void Generic(const GenericEvent& e, Queue&) override { f_(*e.object); }

   private:
    std::function<void(const api::Object&)> f_;
  };
  std::mutex mu;
  std::map<std::string, std::thread::id> mapped_on;  // object name -> thread
  std::map<std::string, std::thread::id> custom_on;
  auto map = EnqueueRequestsFromMapFunc([&](const api::Object& obj) {
    std::lock_guard lock(mu);
    mapped_on[obj.Meta().name] = std::this_thread::get_id();
    return std::vector<Request>{RequestFor(obj)};
  });
  auto custom = std::make_shared<Custom>([&](const api::Object& obj) {
    std::lock_guard lock(mu);
    custom_on[obj.Meta().name] = std::this_thread::get_id();
  });
  EXPECT_TRUE(map->NonBlocking());
  EXPECT_TRUE(EnqueueRequestForObject()->NonBlocking());
  EXPECT_TRUE(EnqueueRequestForOwner({.owner_kind = "ReplicaSet"})->NonBlocking());
  EXPECT_FALSE(custom->NonBlocking());

  auto rec = std::make_shared<ReconcilerFunc>(
      [](const Request&, std::stop_token) { return Result<ReconcileResult>(Done()); });
  Controller ctrl(ControllerOptions{.name = "informer-source-threads"}, rec);
  ASSERT_TRUE(ctrl.Watch(std::make_shared<InformerSource>(informer), map).ok());
  ASSERT_TRUE(ctrl.Watch(std::make_shared<InformerSource>(informer), custom).ok());
  std::jthread informer_thread([&](std::stop_token st) { informer->Run(st); });
  std::jthread controller_thread([&](std::stop_token st) { (void)ctrl.Start(st); });
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return mapped_on.contains("a") && custom_on.contains("a");
  }));
  // A live event (the initial "a" may be the replay a handler registered after start gets, on
  // the registering thread).
  auto watch = lw->WaitForOpenedWatch(0);
  ASSERT_NE(watch, nullptr);
  watch->Push(api::WatchEventType::kAdded, MakeObj("ns", "b", "11"));
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard lock(mu);
    return mapped_on.contains("b") && custom_on.contains("b");
  }));
  controller_thread.request_stop();
  controller_thread.join();
  informer_thread.request_stop();
  watch->Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(mapped_on["b"], informer_thread.get_id());
  EXPECT_NE(custom_on["b"], informer_thread.get_id());
}

}  // namespace
}  // namespace kcm::runtime
