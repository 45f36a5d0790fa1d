// Builder: For enqueues the object itself, Owns its controller owner, Watches what the handler
// maps to; Complete registers every watch (they start with Start) and refuses a missing informer
// or an empty builder.
#include "pkg/runtime/builder.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/runtime/channel_source.h"

namespace kcm::runtime {
namespace {

using mocks::FakeListerWatcher;
using mocks::MakeObj;
using mocks::WaitUntil;

std::shared_ptr<cache::SharedIndexInformer> InformerOf(std::vector<api::ObjectPtr> objects) {
  auto lw = std::make_shared<FakeListerWatcher>();
  lw->ScriptList(std::move(objects), "10");
  return std::make_shared<cache::SharedIndexInformer>(lw, cache::SharedIndexInformerOptions{});
}

// Records the keys it reconciles.
class RecordingReconciler final : public Reconciler {
 public:
  Result<ReconcileResult> Reconcile(const Request& r, std::stop_token) override {
    std::lock_guard lock(mu_);
    seen_.insert(r.Key());
    return Done();
  }
  std::set<std::string> Seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  std::set<std::string> seen_;
};

TEST(BuilderTest, ForOwnsAndWatchesEnqueueWhatEachMapsTo) {
  auto widgets = InformerOf({MakeObj("ns", "parent")});
  // An owned object: its controller owner is ns/owner, a Widget of example.io.
  api::ObjectMeta meta;
  meta.namespace_ = "ns";
  meta.name = "child";
  meta.resource_version = "1";
  meta.owner_references = {api::OwnerReference{.api_version = "example.io/v1",
                                               .kind = "Widget",
                                               .name = "owner",
                                               .uid = api::Uid("u"),
                                               .controller = true}};
  api::ObjectPtr owned = std::make_shared<mocks::FakeObject>(std::move(meta));
  auto gadgets = InformerOf({owned});
  auto events = std::make_shared<ChannelSource>();

  RecordingReconciler reconciler;
  auto controller = NewControllerManagedBy(ControllerOptions{.name = "builder-test"})
                        .For(widgets)
                        .Owns(gadgets, {.owner_group = "example.io", .owner_kind = "Widget"})
                        .Watches(events, EnqueueRequestsFromMapFunc([](const api::Object& obj) {
                                   return std::vector<Request>{{"mapped", obj.Meta().name}};
                                 }))
                        .Complete(reconciler);
  ASSERT_TRUE(controller.ok()) << controller.error().ToString();

  std::jthread widgets_thread([&](std::stop_token st) { widgets->Run(st); });
  std::jthread gadgets_thread([&](std::stop_token st) { gadgets->Run(st); });
  std::jthread controller_thread([&](std::stop_token st) { (void)(*controller)->Start(st); });
  events->Send({MakeObj("elsewhere", "e")});
  EXPECT_TRUE(WaitUntil([&] {
    return reconciler.Seen() == std::set<std::string>{"ns/parent", "ns/owner", "mapped/e"};
  })) << ::testing::PrintToString(reconciler.Seen());
  controller_thread.request_stop();
  controller_thread.join();
}

TEST(BuilderTest, CompleteRefusesAMissingInformerOrNothingToWatch) {
  RecordingReconciler reconciler;
  auto missing = NewControllerManagedBy(ControllerOptions{.name = "builder-missing"})
                     .For(nullptr)
                     .Complete(reconciler);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().reason, "InvalidArgument");
  EXPECT_NE(missing.error().message.find("builder-missing"), std::string::npos);

  auto empty =
      NewControllerManagedBy(ControllerOptions{.name = "builder-empty"}).Complete(reconciler);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().reason, "InvalidArgument");
}

}  // namespace
}  // namespace kcm::runtime
