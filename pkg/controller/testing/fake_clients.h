// FakeReplicaSetClient and FakeDeploymentClient: the recording fakes of the two write seams
// (pkg/controller/replicaset_client.h, deployment_client.h), for controller unit tests. Each
// records every call into an ActionLog (share one between both fakes to see the order across
// resources) and answers like an API server holding the objects the test Set() or the writes
// stored: a create gets a uid, a creationTimestamp and a resourceVersion, an update a new
// resourceVersion, a GET of an unknown object is NotFound. Failures are injected per verb.
// Thread-safe (the ReplicaSet controller's workers call concurrently).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/controller/deployment_client.h"
#include "pkg/controller/replicaset_client.h"
#include "pkg/controller/testing/action_log.h"
#include "pkg/util/result.h"

namespace kcm::controller::testing {

namespace detail {
std::string Key(std::string_view ns, std::string_view name);
// The NotFound Status an API server answers for `name` of `resource` ("replicasets.apps").
Error NotFound(std::string_view resource, std::string_view name);
// What an API server does to a written object: a create gets a uid and a creationTimestamp,
// every write the resourceVersion `rv`.
Result<std::string> AsStored(const std::string& verb, const std::string& body, int64_t rv);
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

class FakeReplicaSetClient final : public ReplicaSetClient {
 public:
  explicit FakeReplicaSetClient(std::shared_ptr<ActionLog> log = std::make_shared<ActionLog>())
      : log_(std::move(log)) {}

  Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) override;
  Result<ReplicaSetPtr> Create(std::string_view ns, std::string body) override;
  Result<ReplicaSetPtr> Update(std::string_view ns, std::string_view name,
                               std::string body) override;
  Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                     const api::ReplicaSetStatus& status) override;
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override;
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override;

  // The object a GET answers with.
  void Set(ReplicaSetPtr rs);
  void Fail(const std::string& verb, Error error, int times = -1);
  void ClearFailure(const std::string& verb);
  // Status writes answer without terminatingReplicas (an API server with the field disabled).
  void DropTerminating();
  // Status writes return numeric resourceVersions from `first` on (else "<rv>+").
  void NumberWritesFrom(int64_t first);

  struct StatusWrite {
    std::string resource_version;  // of the object the write was based on
    api::ReplicaSetStatus status;
  };
  std::vector<StatusWrite> StatusWrites() const;
  ActionLog& log() const { return *log_; }

 private:
  std::shared_ptr<ActionLog> log_;
  ObjectTracker<api::ReplicaSet> tracker_{"replicasets.apps", &DecodeReplicaSetBody};
  mutable std::mutex mu_;  // guards the status-write state below
  std::vector<StatusWrite> status_writes_;
  bool drop_terminating_ = false;
  std::optional<int64_t> next_status_rv_;
};

class FakeDeploymentClient final : public DeploymentClient {
 public:
  explicit FakeDeploymentClient(std::shared_ptr<ActionLog> log = std::make_shared<ActionLog>())
      : log_(std::move(log)) {}

  Result<DeploymentPtr> Get(std::string_view ns, std::string_view name) override;
  Result<DeploymentPtr> Update(std::string_view ns, std::string_view name,
                               std::string body) override;
  Result<DeploymentPtr> UpdateStatus(std::string_view ns, std::string_view name,
                                     std::string body) override;

  // The object a GET answers with.
  void Set(DeploymentPtr d);
  void Fail(const std::string& verb, Error error, int times = -1);
  ActionLog& log() const { return *log_; }

 private:
  std::shared_ptr<ActionLog> log_;
  ObjectTracker<api::Deployment> tracker_{"deployments.apps", &DecodeDeploymentBody};
};

}  // namespace kcm::controller::testing
