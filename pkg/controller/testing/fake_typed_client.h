// FakeTypedClient<T>: the one recording fake of the write seam TypedClient<T>
// (pkg/controller/typed_client.h), for controller unit tests (FakeReplicaSetClient,
// FakeDeploymentClient). Each records every call into an ActionLog (share one between both fakes
// to see the order across resources) and answers like an API server holding the objects the test
// Set() or the writes stored: a create gets a uid, a creationTimestamp and a resourceVersion, an
// update a new resourceVersion, a GET of an unknown object is NotFound. Failures are injected per
// verb. Thread-safe (the ReplicaSet controller's workers call concurrently).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/controller/testing/action_log.h"
#include "pkg/controller/typed_client.h"
#include "pkg/util/result.h"

namespace kcm::controller::testing {

namespace detail {
std::string Key(std::string_view ns, std::string_view name);
// The NotFound Status an API server answers for `name` of `resource` ("replicasets.apps").
Error NotFound(std::string_view resource, std::string_view name);
// What an API server does to a written object: a create gets a uid and a creationTimestamp,
// every write the resourceVersion `rv`.
Result<std::string> AsStored(const std::string& verb, const std::string& body, int64_t rv);
// metadata.name of a JSON body ("" when it has none).
std::string NameOf(const std::string& body);
}  // namespace detail

// The objects one fake client holds, the failures injected into it per verb ("get", "create",
// "update", "update-status", "patch", "delete") and the resourceVersions it hands out (client-go's
// testing.ObjectTracker, narrowed). Thread-safe.
template <typename T>
class ObjectTracker {
 public:
  using Ptr = std::shared_ptr<const T>;
  using DecodeFn = Result<Ptr> (*)(const std::string&);

  ObjectTracker(std::string resource, DecodeFn decode)
      : resource_(std::move(resource)), decode_(decode) {}

  Result<Ptr> Get(std::string_view ns, std::string_view name) {
    std::lock_guard lock(mu_);
    if (auto e = TakeLocked("get")) return *e;
    auto it = objects_.find(detail::Key(ns, name));
    if (it == objects_.end()) return detail::NotFound(resource_, name);
    return it->second;
  }
  // A create or update of `body`: fails as injected, else stores and returns what the server
  // would.
  Result<Ptr> Write(const std::string& verb, std::string_view ns, const std::string& body) {
    std::lock_guard lock(mu_);
    if (auto e = TakeLocked(verb)) return *e;
    Result<std::string> stored = detail::AsStored(verb, body, ++rv_);
    if (!stored.ok()) return stored.error();
    Result<Ptr> obj = decode_(*stored);
    if (!obj.ok()) return obj.error();
    objects_[detail::Key(ns, (*obj)->metadata.name)] = *obj;
    return obj;
  }
  void Put(Ptr obj) {
    std::lock_guard lock(mu_);
    objects_[detail::Key(obj->metadata.namespace_, obj->metadata.name)] = std::move(obj);
  }
  void Erase(std::string_view ns, std::string_view name) {
    std::lock_guard lock(mu_);
    objects_.erase(detail::Key(ns, name));
  }
  // The next `times` calls of `verb` fail with `error` (-1: every call until cleared).
  void Fail(const std::string& verb, Error error, int times) {
    std::lock_guard lock(mu_);
    failures_.insert_or_assign(verb, Failure{std::move(error), times});
  }
  void ClearFailure(const std::string& verb) {
    std::lock_guard lock(mu_);
    failures_.erase(verb);
  }
  // The error the next call of `verb` fails with, if any (and counts it).
  std::optional<Error> TakeFailure(const std::string& verb) {
    std::lock_guard lock(mu_);
    return TakeLocked(verb);
  }

 private:
  struct Failure {
    Error error;
    int times;
  };
  std::optional<Error> TakeLocked(const std::string& verb) {
    auto it = failures_.find(verb);
    if (it == failures_.end()) return std::nullopt;
    Error error = it->second.error;
    if (it->second.times > 0 && --it->second.times == 0) failures_.erase(it);
    return error;
  }

  const std::string resource_;
  const DecodeFn decode_;
  std::mutex mu_;
  std::map<std::string, Ptr> objects_;  // "ns/name"
  std::map<std::string, Failure> failures_;
  int64_t rv_ = 1000;
};

// The recording fake of TypedClient<T>. Every call is recorded in the ActionLog; a status write
// is also kept as a StatusWrite. How a status write is answered: kDecodedBody stores the encoded
// body as an API server would (a new resourceVersion from the tracker); kTypedCopy answers with
// `obj` and the new status, its resourceVersion "<rv>+" or numbered from NumberWritesFrom — for
// objects built field by field in tests, which have no raw JSON to encode.
enum class StatusAnswer { kDecodedBody, kTypedCopy };

template <typename T>
class FakeTypedClient final : public TypedClient<T> {
 public:
  using typename TypedClient<T>::Ptr;
  using typename TypedClient<T>::StatusType;
  using Traits = ResourceTraits<T>;

  explicit FakeTypedClient(std::shared_ptr<ActionLog> log = std::make_shared<ActionLog>(),
                           StatusAnswer status_answer = StatusAnswer::kTypedCopy)
      : log_(std::move(log)), status_answer_(status_answer) {}

  Result<Ptr> Get(std::string_view ns, std::string_view name) override {
    log_->Record(
        {"get", std::string(Traits::kResource.resource), std::string(ns), std::string(name), ""});
    return tracker_.Get(ns, name);
  }
  Result<Ptr> Create(std::string_view ns, std::string body) override {
    log_->Record({"create", std::string(Traits::kResource.resource), std::string(ns),
                  detail::NameOf(body), body});
    return tracker_.Write("create", ns, body);
  }
  Result<Ptr> Update(std::string_view ns, std::string_view name, std::string body) override {
    log_->Record({"update", std::string(Traits::kResource.resource), std::string(ns),
                  std::string(name), body});
    return tracker_.Write("update", ns, body);
  }
  Result<Ptr> UpdateStatus(const T& obj, const StatusType& status) override {
    // Objects built field by field have no raw JSON to encode; the log then has no body.
    Result<std::string> body = Traits::EncodeStatus(obj, status);
    const std::string& ns = obj.metadata.namespace_;
    log_->Record({"update-status", std::string(Traits::kResource.resource), ns, obj.metadata.name,
                  body.ok() ? *body : ""});
    std::lock_guard lock(mu_);
    status_writes_.push_back({obj.metadata.resource_version, status});
    if (status_answer_ == StatusAnswer::kDecodedBody) {
      if (!body.ok()) return body.error();
      return tracker_.Write("update-status", ns, *body);
    }
    if (auto e = tracker_.TakeFailure("update-status")) return *e;
    auto updated = std::make_shared<T>(obj);
    updated->status = status;
    if constexpr (requires { updated->status.terminating_replicas; }) {
      if (drop_terminating_) updated->status.terminating_replicas.reset();
    }
    updated->metadata.resource_version = next_status_rv_ ? std::to_string((*next_status_rv_)++)
                                                         : obj.metadata.resource_version + "+";
    tracker_.Put(updated);
    return Ptr(updated);
  }
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override {
    log_->Record({"patch", std::string(Traits::kResource.resource), std::string(ns),
                  std::string(name), patch});
    if (auto e = tracker_.TakeFailure("patch")) return *e;
    return OkStatus();
  }
  Status Delete(std::string_view ns, std::string_view name, std::string_view /*uid*/) override {
    log_->Record({"delete", std::string(Traits::kResource.resource), std::string(ns),
                  std::string(name), ""});
    if (auto e = tracker_.TakeFailure("delete")) return *e;
    tracker_.Erase(ns, name);
    return OkStatus();
  }

  // The object a GET answers with.
  void Set(Ptr obj) { tracker_.Put(std::move(obj)); }
  void Fail(const std::string& verb, Error error, int times = -1) {
    tracker_.Fail(verb, std::move(error), times);
  }
  void ClearFailure(const std::string& verb) { tracker_.ClearFailure(verb); }
  // kTypedCopy status writes answer without terminatingReplicas (an API server with the field
  // disabled; ReplicaSets only).
  void DropTerminating() {
    std::lock_guard lock(mu_);
    drop_terminating_ = true;
  }
  // kTypedCopy status writes return numeric resourceVersions from `first` on (else "<rv>+").
  void NumberWritesFrom(int64_t first) {
    std::lock_guard lock(mu_);
    next_status_rv_ = first;
  }

  struct StatusWrite {
    std::string resource_version;  // of the object the write was based on
    StatusType status;
  };
  std::vector<StatusWrite> StatusWrites() const {
    std::lock_guard lock(mu_);
    return status_writes_;
  }
  ActionLog& log() const { return *log_; }

 private:
  std::shared_ptr<ActionLog> log_;
  const StatusAnswer status_answer_;
  ObjectTracker<T> tracker_{Traits::kResource.GroupResource(), &DecodeBody<T>};
  mutable std::mutex mu_;  // guards the status-write state below
  std::vector<StatusWrite> status_writes_;
  bool drop_terminating_ = false;
  std::optional<int64_t> next_status_rv_;
};

using FakeReplicaSetClient = FakeTypedClient<api::ReplicaSet>;
using FakeDeploymentClient = FakeTypedClient<api::Deployment>;

}  // namespace kcm::controller::testing
