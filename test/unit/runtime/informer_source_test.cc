// InformerSource: a controller fed by a real SharedIndexInformer over a scripted ListerWatcher.
#include "pkg/runtime/informer_source.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "pkg/runtime/controller.h"
#include "test/mocks/fake_lister_watcher.h"

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
    return Result<ReconcileResult>(ReconcileResult{});
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

}  // namespace
}  // namespace kcm::runtime
