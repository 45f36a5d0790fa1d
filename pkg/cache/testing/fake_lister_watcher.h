// Test doubles for the informer layers (pkg/cache, pkg/informers, pkg/runtime and the controllers'
// run tests): objects built from metadata, a scripted ListerWatcher with watches the test feeds,
// and a ReflectorStore that records what a Reflector does to it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/api/testing/fake_object.h"
#include "pkg/cache/listwatch.h"
#include "pkg/cache/store.h"

namespace kcm::mocks {

inline api::ObjectPtr MakeObj(std::string ns, std::string name, std::string rv = "1",
                              std::string payload = "") {
  api::ObjectMeta meta;
  meta.namespace_ = std::move(ns);
  meta.name = std::move(name);
  meta.resource_version = std::move(rv);
  return std::make_shared<FakeObject>(std::move(meta), std::move(payload));
}

inline const std::string& Payload(const api::ObjectPtr& obj) {
  return static_cast<const FakeObject&>(*obj).payload;
}

// Bounded real-time wait for a condition another thread makes true (never a timer substitute).
inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A watch stream the test feeds. Next() blocks until an event is pushed, the "server" closes it,
// or the reflector stops it.
class FakeWatch {
 public:
  void Push(api::WatchEvent event) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(event));
    cv_.notify_all();
  }
  void Push(api::WatchEventType type, api::ObjectPtr obj) {
    api::WatchEvent event;
    event.type = type;
    event.resource_version = obj ? obj->Meta().resource_version : "";
    event.object = std::move(obj);
    Push(std::move(event));
  }
  void PushBookmark(std::string rv, bool initial_events_end = false) {
    api::WatchEvent event;
    event.type = api::WatchEventType::kBookmark;
    event.resource_version = std::move(rv);
    event.initial_events_end = initial_events_end;
    Push(std::move(event));
  }
  void PushError(Error error) {
    api::WatchEvent event;
    event.type = api::WatchEventType::kError;
    event.error = std::move(error);
    Push(std::move(event));
  }
  // The server ends the stream after the queued events.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  bool stopped() const {
    std::lock_guard lock(mu_);
    return stopped_;
  }
  // Events pushed and not yet returned: a real stream's frames of one read.
  std::size_t buffered() const {
    std::lock_guard lock(mu_);
    return stopped_ ? 0 : events_.size();
  }

  Result<std::optional<api::WatchEvent>> Next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopped_ || !events_.empty() || closed_; });
    if (stopped_ || events_.empty()) return std::optional<api::WatchEvent>();
    api::WatchEvent event = std::move(events_.front());
    events_.pop_front();
    return std::optional<api::WatchEvent>(std::move(event));
  }
  void Stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<api::WatchEvent> events_;
  bool closed_ = false;
  bool stopped_ = false;
};

class FakeWatchHandle final : public cache::WatchInterface {
 public:
  explicit FakeWatchHandle(std::shared_ptr<FakeWatch> w) : w_(std::move(w)) {}
  Result<std::optional<api::WatchEvent>> Next() override { return w_->Next(); }
  void Stop() override { w_->Stop(); }
  std::size_t buffered_events() const override { return w_->buffered(); }

 private:
  std::shared_ptr<FakeWatch> w_;
};

// Scripted ListerWatcher. List answers from the scripted queue (then an empty list at RV "1").
// Watch answers from the scripted queue; when it is empty, with a fresh open FakeWatch if
// open_watches_when_unscripted, else with a non-retriable error so ListAndWatch returns.
class FakeListerWatcher final : public cache::ListerWatcher {
 public:
  bool open_watches_when_unscripted = true;

  void ScriptList(Result<api::ObjectList> result) {
    std::lock_guard lock(mu_);
    lists_.push_back(std::move(result));
  }
  void ScriptList(std::vector<api::ObjectPtr> items, std::string rv, std::string cont = "") {
    api::ObjectList list;
    list.items = std::move(items);
    list.resource_version = std::move(rv);
    list.continue_token = std::move(cont);
    ScriptList(Result<api::ObjectList>(std::move(list)));
  }
  std::shared_ptr<FakeWatch> ScriptWatch() {
    auto w = std::make_shared<FakeWatch>();
    std::lock_guard lock(mu_);
    watches_.push_back(w);
    return w;
  }
  void ScriptWatchError(Error error) {
    std::lock_guard lock(mu_);
    watches_.push_back(std::move(error));
  }

  Result<api::ObjectList> List(const api::ListOptions& options) override {
    std::lock_guard lock(mu_);
    list_calls_.push_back(options);
    if (lists_.empty()) {
      api::ObjectList empty;
      empty.resource_version = "1";
      return empty;
    }
    Result<api::ObjectList> out = std::move(lists_.front());
    lists_.pop_front();
    return out;
  }

  Result<std::unique_ptr<cache::WatchInterface>> Watch(const api::ListOptions& options) override {
    std::lock_guard lock(mu_);
    watch_calls_.push_back(options);
    if (watches_.empty()) {
      if (!open_watches_when_unscripted) {
        return Error{500, "InternalError", "no scripted watch", {}};
      }
      auto w = std::make_shared<FakeWatch>();
      opened_.push_back(w);
      return std::unique_ptr<cache::WatchInterface>(std::make_unique<FakeWatchHandle>(w));
    }
    auto next = std::move(watches_.front());
    watches_.pop_front();
    if (auto* err = std::get_if<Error>(&next)) return *err;
    auto w = std::get<std::shared_ptr<FakeWatch>>(std::move(next));
    opened_.push_back(w);
    return std::unique_ptr<cache::WatchInterface>(std::make_unique<FakeWatchHandle>(w));
  }

  std::vector<api::ListOptions> list_calls() const {
    std::lock_guard lock(mu_);
    return list_calls_;
  }
  std::vector<api::ListOptions> watch_calls() const {
    std::lock_guard lock(mu_);
    return watch_calls_;
  }
  size_t num_lists() const { return list_calls().size(); }
  size_t num_watches() const { return watch_calls().size(); }
  // The n-th (0-based) watch that was opened, once it exists.
  std::shared_ptr<FakeWatch> WaitForOpenedWatch(size_t n) {
    std::shared_ptr<FakeWatch> out;
    WaitUntil([&] {
      std::lock_guard lock(mu_);
      if (opened_.size() > n) out = opened_[n];
      return out != nullptr;
    });
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::deque<Result<api::ObjectList>> lists_;
  std::deque<std::variant<std::shared_ptr<FakeWatch>, Error>> watches_;
  std::vector<std::shared_ptr<FakeWatch>> opened_;
  std::vector<api::ListOptions> list_calls_;
  std::vector<api::ListOptions> watch_calls_;
};

// Records what a Reflector does to its store.
class RecordingStore final : public cache::ReflectorStore {
 public:
  Status Add(api::ObjectPtr obj) override { return Record("Add", *obj); }
  Status Update(api::ObjectPtr obj) override { return Record("Update", *obj); }
  Status Delete(api::ObjectPtr obj) override { return Record("Delete", *obj); }
  Status Replace(std::vector<api::ObjectPtr> items, const std::string& rv) override {
    std::string op = "Replace@" + rv + ":";
    for (const auto& o : items) op += " " + o->Meta().name;
    std::lock_guard lock(mu_);
    ops_.push_back(op);
    return OkStatus();
  }
  Status Resync() override {
    std::lock_guard lock(mu_);
    ++resyncs_;
    return OkStatus();
  }
  void Bookmark(const std::string& rv) override {
    std::lock_guard lock(mu_);
    ops_.push_back("Bookmark@" + rv);
  }
  // Records how many events each hand-over carried, then applies them one by one (the default).
  Status AddWatchEvents(std::vector<api::WatchEvent>& events) override {
    {
      std::lock_guard lock(mu_);
      batches_.push_back(events.size());
    }
    return ReflectorStore::AddWatchEvents(events);
  }
  std::vector<std::string> ops() const {
    std::lock_guard lock(mu_);
    return ops_;
  }
  std::vector<std::size_t> batches() const {
    std::lock_guard lock(mu_);
    return batches_;
  }
  int resyncs() const {
    std::lock_guard lock(mu_);
    return resyncs_;
  }

 private:
  Status Record(const std::string& verb, const api::Object& obj) {
    std::lock_guard lock(mu_);
    ops_.push_back(verb + " " + obj.Meta().name + "@" + obj.Meta().resource_version);
    return OkStatus();
  }
  mutable std::mutex mu_;
  std::vector<std::string> ops_;
  std::vector<std::size_t> batches_;
  int resyncs_ = 0;
};

}  // namespace kcm::mocks
