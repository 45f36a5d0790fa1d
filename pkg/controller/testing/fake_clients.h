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

// Failures injected per verb ("get", "create", "update", "update-status", "patch", "delete").
class FailureTable {
 public:
  // The next `times` calls of `verb` fail with `error` (-1: every call until Clear).
  void Set(const std::string& verb, Error error, int times = -1);
  void Clear(const std::string& verb);
  // The error the next call of `verb` fails with, if any (and counts it).
  std::optional<Error> Take(const std::string& verb);

 private:
  struct Entry {
    Error error;
    int times;
  };
  std::map<std::string, Entry> entries_;  // guarded by the owning fake's mutex
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
  Result<ReplicaSetPtr> Store(const std::string& verb, std::string_view ns, std::string body);

  std::shared_ptr<ActionLog> log_;
  mutable std::mutex mu_;
  std::map<std::string, ReplicaSetPtr> objects_;  // "ns/name"
  FailureTable failures_;
  std::vector<StatusWrite> status_writes_;
  bool drop_terminating_ = false;
  std::optional<int64_t> next_status_rv_;
  int64_t rv_ = 1000;
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
  Result<DeploymentPtr> Store(const std::string& verb, std::string_view ns, std::string_view name,
                              std::string body);

  std::shared_ptr<ActionLog> log_;
  mutable std::mutex mu_;
  std::map<std::string, DeploymentPtr> objects_;  // "ns/name"
  FailureTable failures_;
  int64_t rv_ = 1000;
};

}  // namespace kcm::controller::testing
