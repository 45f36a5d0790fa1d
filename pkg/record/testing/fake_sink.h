// FakeEventSink: an EventSink for tests that records every call and answers from a script of
// errors (then success), or, once HoldWrites() was called, holds every call until its stop is
// requested and then answers Canceled. Thread-safe; WaitForCalls blocks in real time, bounded.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/record/event_sink.h"

namespace kcm::record {

struct SinkCall {
  std::string verb;  // "create", "update", "patch"
  api::Event event;
  std::string patch;
};

class FakeEventSink final : public EventSink {
 public:
  Result<api::Event> Create(const api::Event& event, std::stop_token stop) override {
    return Answer("create", event, "", stop);
  }
  Result<api::Event> Update(const api::Event& event, std::stop_token stop) override {
    return Answer("update", event, "", stop);
  }
  Result<api::Event> Patch(const api::Event& event, std::string_view patch,
                           std::stop_token stop) override {
    return Answer("patch", event, std::string(patch), stop);
  }

  // From now on every call waits until its stop is requested (a server that never answers).
  void HoldWrites() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }

  // The next calls of `verb` fail with these errors, in order.
  void FailNext(const std::string& verb, Error e) {
    std::lock_guard lock(mu_);
    errors_.push_back({verb, std::move(e)});
  }

  std::vector<SinkCall> Calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

  bool WaitForCalls(size_t n) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return calls_.size() >= n; });
  }

 private:
  Result<api::Event> Answer(const std::string& verb, const api::Event& event, std::string patch,
                            std::stop_token stop) {
    std::unique_lock lock(mu_);
    calls_.push_back({verb, event, std::move(patch)});
    cv_.notify_all();
    if (hold_) {
      std::condition_variable_any held;
      held.wait(lock, stop, [] { return false; });
      return errors::Canceled("event write canceled");
    }
    for (auto it = errors_.begin(); it != errors_.end(); ++it) {
      if (it->first == verb) {
        Error e = it->second;
        errors_.erase(it);
        return e;
      }
    }
    api::Event stored = event;
    stored.metadata.resource_version = std::to_string(++resource_version_);
    return stored;
  }

  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  std::vector<SinkCall> calls_;
  std::deque<std::pair<std::string, Error>> errors_;
  int resource_version_ = 0;
  bool hold_ = false;
};

}  // namespace kcm::record
