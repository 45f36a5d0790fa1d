// FakeLeaseStore and FakeLock: an in-memory Lease "server" with resourceVersions and conflicts,
// and ResourceLocks over it (several candidates can share one store). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pkg/leaderelection/resource_lock.h"

namespace kcm::leaderelection {

class FakeLeaseStore {
 public:
  // What another writer (or a test) does directly on the object; bumps the resourceVersion.
  void Set(LeaderElectionRecord record) {
    std::lock_guard lock(mu_);
    record_ = std::move(record);
    ++rv_;
  }
  std::optional<LeaderElectionRecord> Record() const {
    std::lock_guard lock(mu_);
    return record_;
  }
  int64_t ResourceVersion() const {
    std::lock_guard lock(mu_);
    return rv_;
  }

 private:
  friend class FakeLock;
  mutable std::mutex mu_;
  std::optional<LeaderElectionRecord> record_;
  int64_t rv_ = 0;
};

class FakeLock final : public ResourceLock {
 public:
  FakeLock(std::shared_ptr<FakeLeaseStore> store, std::string identity)
      : store_(std::move(store)), identity_(std::move(identity)) {}

  Result<LeaderElectionRecord> Get(std::stop_token stop) override {
    if (auto e = Begin("get", stop)) return *e;
    std::lock_guard lock(store_->mu_);
    if (!store_->record_) return Error{404, "NotFound", "leases \"kcm\" not found", {}};
    last_rv_ = store_->rv_;
    return *store_->record_;
  }
  Status Create(const LeaderElectionRecord& record, std::stop_token stop) override {
    if (auto e = Begin("create", stop)) return *e;
    std::lock_guard lock(store_->mu_);
    if (store_->record_) return Error{409, "AlreadyExists", "already exists", {}};
    store_->record_ = record;
    last_rv_ = ++store_->rv_;
    return OkStatus();
  }
  Status Update(const LeaderElectionRecord& record, std::stop_token stop) override {
    if (auto e = Begin("update", stop)) return *e;
    if (hang_updates) {
      // A request that never gets an answer: it ends only when its stop token is requested
      // (bounded at 30 s of real time so a broken test cannot hang).
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock l(m);
      cv.wait_for(l, stop, std::chrono::seconds(30), [] { return false; });
      return errors::Canceled("request canceled");
    }
    if (before_update) before_update();
    std::lock_guard lock(store_->mu_);
    if (last_rv_ == 0) return Error::Local("LeaseNotInitialized", "call get or create first");
    if (store_->rv_ != last_rv_) return Error{409, "Conflict", "the object has been modified", {}};
    store_->record_ = record;
    last_rv_ = ++store_->rv_;
    return OkStatus();
  }
  void RecordEvent(std::string_view message) override {
    std::lock_guard lock(mu_);
    events_.push_back(identity_ + " " + std::string(message));
  }
  std::string Describe() const override { return "kube-system/kcm"; }
  std::string Identity() const override { return identity_; }

  // The next calls (any verb) fail with `e`, `times` times.
  void FailNext(Error e, int times = 1) {
    std::lock_guard lock(mu_);
    for (int i = 0; i < times; ++i) failures_.push_back(e);
  }
  void FailAlways(Error e) {
    std::lock_guard lock(mu_);
    fail_always_ = std::move(e);
  }
  // Calls succeed again (the failures of FailNext and FailAlways are dropped).
  void StopFailing() {
    std::lock_guard lock(mu_);
    failures_.clear();
    fail_always_.reset();
  }
  // Calls so far, in order ("get", "create", "update").
  std::vector<std::string> Ops() const {
    std::lock_guard lock(mu_);
    return ops_;
  }
  size_t OpCount() const {
    std::lock_guard lock(mu_);
    return ops_.size();
  }
  std::vector<std::string> Events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

  // Runs inside Update before the write (e.g. to let another writer win the race).
  std::function<void()> before_update;
  // While set, Update blocks until its stop token is requested, then fails "Canceled".
  std::atomic<bool> hang_updates{false};

 private:
  // A call whose stop token is already requested fails "Canceled" without touching the store,
  // as RestClient::Do sends no request after the stop: after the elector's renew-deadline cut-off
  // (LeaderElector::TryAcquireOrRenewBefore) the rest of that attempt fails, as upstream's
  // requests do under an expired context.
  std::optional<Error> Begin(const char* verb, const std::stop_token& stop) {
    std::lock_guard lock(mu_);
    ops_.push_back(verb);
    if (stop.stop_requested()) return errors::Canceled("request canceled");
    if (fail_always_) return fail_always_;
    if (!failures_.empty()) {
      Error e = failures_.front();
      failures_.pop_front();
      return e;
    }
    return std::nullopt;
  }

  std::shared_ptr<FakeLeaseStore> store_;
  const std::string identity_;
  int64_t last_rv_ = 0;  // touched under store_->mu_

  mutable std::mutex mu_;
  std::vector<std::string> ops_;
  std::vector<std::string> events_;
  std::deque<Error> failures_;
  std::optional<Error> fail_always_;
};

}  // namespace kcm::leaderelection
