// The SharedIndexInformer tests' fixture (shared_informer*_test.cc, wait_test.cc): a
// RecordingHandler that logs notifications as text, and SharedInformerTest, an informer over a
// scripted FakeListerWatcher on a FakeClock. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/shared_informer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/util/testing/fake_clock.h"

namespace kcm::cache {

using namespace std::chrono_literals;
using ::kcm::mocks::FakeListerWatcher;
using ::kcm::mocks::MakeObj;
using ::kcm::mocks::WaitUntil;

// Records notifications as text; an optional hook runs first (to block or throw).
class RecordingHandler final : public ResourceEventHandler {
 public:
  explicit RecordingHandler(std::shared_ptr<Indexer> cache = nullptr) : cache_(std::move(cache)) {}

  std::function<void(const std::string&)> hook;
  // ResourceEventHandler::NonBlocking: called on the informer's thread.
  bool non_blocking = false;
  bool NonBlocking() const override { return non_blocking; }

  void OnAdd(const api::ObjectPtr& obj, bool initial) override {
    Record("add " + obj->Meta().name + "@" + obj->Meta().resource_version +
           (initial ? " initial" : "") + InCache(obj));
  }
  void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) override {
    Record("update " + new_obj->Meta().name + "@" + old_obj->Meta().resource_version + "->" +
           new_obj->Meta().resource_version + InCache(new_obj));
  }
  void OnDelete(const api::ObjectPtr& obj) override {
    const auto* tombstone = AsTombstone(*obj);
    const bool still_cached =
        cache_ && cache_->GetByKey(DeletionHandlingMetaNamespaceKeyFunc(*obj));
    Record("delete " + (tombstone ? "tombstone " + tombstone->Key() : obj->Meta().name) +
           (still_cached ? " STILL-IN-CACHE" : ""));
  }

  std::vector<std::string> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return events_.size();
  }
  size_t Count(const std::string& event) const {
    std::lock_guard lock(mu_);
    return std::count(events_.begin(), events_.end(), event);
  }
  bool Saw(const std::string& event) const { return Count(event) > 0; }

 private:
  // The cache must already hold what a handler is told about (upstream's
  // processDeltas updates the indexer before it distributes the notification). Only meaningful when
  // the test lets no later event for the object in before the handler runs.
  std::string InCache(const api::ObjectPtr& obj) const {
    if (!cache_) return "";
    return cache_->Get(*obj) == obj ? "" : " NOT-IN-CACHE";
  }
  void Record(std::string event) {
    if (hook) hook(event);
    std::lock_guard lock(mu_);
    events_.push_back(std::move(event));
  }
  std::shared_ptr<Indexer> cache_;
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

class SharedInformerTest : public ::testing::Test {
 protected:
  void MakeInformer(Clock::duration resync = 0s) {
    informer_ = std::make_unique<SharedIndexInformer>(
        lw_, SharedIndexInformerOptions{.name = "test",
                                        .expected_kind = "Fake",
                                        .resync_period = resync,
                                        .clock = &clock_,
                                        .rand = [] { return 0.5; }});
  }
  void Start() {
    runner_ = std::jthread([this](std::stop_token st) { informer_->Run(st); });
  }
  void Stop() {
    runner_.request_stop();
    runner_.join();
  }
  void TearDown() override {
    if (runner_.joinable()) Stop();
  }
  // Where the late-handler tests begin: a handler registered before start (early_), the list
  // a@1, b@1 and a watch after it (watch_), the informer started and synced.
  void StartSyncedWithAnEarlyHandler() {
    MakeInformer();
    early_ = std::make_shared<RecordingHandler>();
    ASSERT_TRUE(informer_->AddEventHandler(early_).ok());
    lw_->ScriptList({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1")}, "1");
    watch_ = lw_->ScriptWatch();
    Start();
    ASSERT_TRUE(WaitUntil([&] { return informer_->HasSynced(); }));
  }

  FakeClock clock_;
  std::shared_ptr<FakeListerWatcher> lw_ = std::make_shared<FakeListerWatcher>();
  std::unique_ptr<SharedIndexInformer> informer_;
  std::jthread runner_;
  std::shared_ptr<RecordingHandler> early_;
  std::shared_ptr<mocks::FakeWatch> watch_;
};

}  // namespace kcm::cache
