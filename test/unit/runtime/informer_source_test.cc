// InformerSource: a controller fed by a real SharedIndexInformer over a scripted ListerWatcher.
#include "pkg/runtime/informer_source.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <set>
#include <thread>

#include "pkg/runtime/controller.h"

namespace kcm::runtime {
namespace {

using namespace std::chrono_literals;

class Item final : public api::Object {
 public:
  Item(std::string ns, std::string name, std::string rv) {
    meta.namespace_ = std::move(ns);
    meta.name = std::move(name);
    meta.resource_version = std::move(rv);
  }
  std::string_view Kind() const override { return "Item"; }
  const api::ObjectMeta& Meta() const override { return meta; }
  api::ObjectMeta meta;
};

// A watch that delivers pushed events and blocks otherwise.
class PushWatch final : public cache::WatchInterface {
 public:
  Result<std::optional<api::WatchEvent>> Next() override {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stopped || !events.empty(); });
    if (events.empty()) return std::optional<api::WatchEvent>();
    api::WatchEvent e = std::move(events.front());
    events.erase(events.begin());
    return std::optional<api::WatchEvent>(std::move(e));
  }
  void Stop() override {
    std::lock_guard lock(mu);
    stopped = true;
    cv.notify_all();
  }
  void Push(api::WatchEvent e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
    cv.notify_all();
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<api::WatchEvent> events;
  bool stopped = false;
};

class ScriptedListerWatcher final : public cache::ListerWatcher {
 public:
  Result<api::ObjectList> List(const api::ListOptions&) override {
    api::ObjectList l;
    l.items = items;
    l.resource_version = "10";
    return l;
  }
  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions&) override {
    auto w = std::make_unique<PushWatch>();
    {
      std::lock_guard lock(mu);
      current = w.get();
    }
    return std::unique_ptr<cache::WatchInterface>(std::move(w));
  }
  PushWatch* Current() {
    std::lock_guard lock(mu);
    return current;
  }
  std::vector<api::ObjectPtr> items;
  std::mutex mu;
  PushWatch* current = nullptr;
};

template <typename F>
bool Eventually(F f) {
  auto end = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return f();
}

TEST(InformerSourceTest, InitialListAndWatchEventsReachTheReconciler) {
  auto lw = std::make_shared<ScriptedListerWatcher>();
  lw->items = {std::make_shared<Item>("ns", "a", "1"), std::make_shared<Item>("ns", "b", "2")};
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

  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return seen == std::set<std::string>{"ns/a", "ns/b"};
  }));
  ASSERT_TRUE(Eventually([&] { return lw->Current() != nullptr; }));
  api::WatchEvent added;
  added.type = api::WatchEventType::kAdded;
  added.object = std::make_shared<Item>("other", "c", "11");
  added.resource_version = "11";
  lw->Current()->Push(added);
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return seen.count("other/c") == 1;
  }));
  controller_thread.request_stop();
  controller_thread.join();
  informer_thread.request_stop();
  if (PushWatch* w = lw->Current()) w->Stop();
}

}  // namespace
}  // namespace kcm::runtime
