#include "pkg/controller/testing/fake_clients.h"

#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/api_errors.h"

namespace kcm::controller::testing {
namespace detail {

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

Error NotFound(std::string_view resource, std::string_view name) {
  return client::DecodeApiError(
      404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":")" +
               std::string(resource) + " \\\"" + std::string(name) + "\\\" not found\"}");
}

// What an API server does to a written object: a create gets a uid and a creationTimestamp, every
// write a new resourceVersion.
Result<std::string> AsStored(const std::string& verb, const std::string& body, int64_t rv) {
  return api::MutateRawJson(body, [&](api::json::Value& obj) -> Status {
    if (verb == "create") {
      const api::json::Value* name = api::json::GetPath(obj, {"metadata", "name"});
      const std::string n = name != nullptr ? name->as_string() : "";
      if (Status s =
              api::json::SetPath(obj, {"metadata", "uid"}, api::json::Value::String("uid-" + n));
          !s.ok()) {
        return s;
      }
      if (Status s = api::json::SetPath(obj, {"metadata", "creationTimestamp"},
                                        api::json::Value::String("2023-06-01T00:00:00Z"));
          !s.ok()) {
        return s;
      }
    }
    return api::json::SetPath(obj, {"metadata", "resourceVersion"},
                              api::json::Value::String(std::to_string(rv)));
  });
}

}  // namespace detail

namespace {

std::string NameOf(const std::string& body) {
  auto v = api::json::Parse(body);
  if (!v.ok()) return "";
  const api::json::Value* name = api::json::GetPath(*v, {"metadata", "name"});
  return name != nullptr ? name->as_string() : "";
}

}  // namespace

// --- FakeReplicaSetClient ---

Result<ReplicaSetPtr> FakeReplicaSetClient::Get(std::string_view ns, std::string_view name) {
  log_->Record({"get", "replicasets", std::string(ns), std::string(name), ""});
  return tracker_.Get(ns, name);
}

Result<ReplicaSetPtr> FakeReplicaSetClient::Create(std::string_view ns, std::string body) {
  log_->Record({"create", "replicasets", std::string(ns), NameOf(body), body});
  return tracker_.Write("create", ns, body);
}

Result<ReplicaSetPtr> FakeReplicaSetClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  log_->Record({"update", "replicasets", std::string(ns), std::string(name), body});
  return tracker_.Write("update", ns, body);
}

Result<ReplicaSetPtr> FakeReplicaSetClient::UpdateStatus(const api::ReplicaSet& rs,
                                                         const api::ReplicaSetStatus& status) {
  // Objects built field by field in tests have no raw JSON to encode; the log then has no body.
  Result<std::string> body = api::EncodeReplicaSetStatus(rs, status);
  log_->Record({"update-status", "replicasets", rs.metadata.namespace_, rs.metadata.name,
                body.ok() ? *body : ""});
  std::lock_guard lock(mu_);
  status_writes_.push_back({rs.metadata.resource_version, status});
  if (auto e = tracker_.TakeFailure("update-status")) return *e;
  auto updated = std::make_shared<api::ReplicaSet>(rs);
  updated->status = status;
  if (drop_terminating_) updated->status.terminating_replicas.reset();
  updated->metadata.resource_version =
      next_status_rv_ ? std::to_string((*next_status_rv_)++) : rs.metadata.resource_version + "+";
  tracker_.Put(updated);
  return ReplicaSetPtr(updated);
}

Status FakeReplicaSetClient::Patch(std::string_view ns, std::string_view name,
                                   const std::string& patch) {
  log_->Record({"patch", "replicasets", std::string(ns), std::string(name), patch});
  if (auto e = tracker_.TakeFailure("patch")) return *e;
  return OkStatus();
}

Status FakeReplicaSetClient::Delete(std::string_view ns, std::string_view name,
                                    std::string_view /*uid*/) {
  log_->Record({"delete", "replicasets", std::string(ns), std::string(name), ""});
  if (auto e = tracker_.TakeFailure("delete")) return *e;
  tracker_.Erase(ns, name);
  return OkStatus();
}

void FakeReplicaSetClient::Set(ReplicaSetPtr rs) {
  tracker_.Put(std::move(rs));
}

void FakeReplicaSetClient::Fail(const std::string& verb, Error error, int times) {
  tracker_.Fail(verb, std::move(error), times);
}

void FakeReplicaSetClient::ClearFailure(const std::string& verb) {
  tracker_.ClearFailure(verb);
}

void FakeReplicaSetClient::DropTerminating() {
  std::lock_guard lock(mu_);
  drop_terminating_ = true;
}

void FakeReplicaSetClient::NumberWritesFrom(int64_t first) {
  std::lock_guard lock(mu_);
  next_status_rv_ = first;
}

std::vector<FakeReplicaSetClient::StatusWrite> FakeReplicaSetClient::StatusWrites() const {
  std::lock_guard lock(mu_);
  return status_writes_;
}

// --- FakeDeploymentClient ---

Result<DeploymentPtr> FakeDeploymentClient::Get(std::string_view ns, std::string_view name) {
  log_->Record({"get", "deployments", std::string(ns), std::string(name), ""});
  return tracker_.Get(ns, name);
}

Result<DeploymentPtr> FakeDeploymentClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  log_->Record({"update", "deployments", std::string(ns), std::string(name), body});
  return tracker_.Write("update", ns, body);
}

Result<DeploymentPtr> FakeDeploymentClient::UpdateStatus(std::string_view ns, std::string_view name,
                                                         std::string body) {
  log_->Record({"update-status", "deployments", std::string(ns), std::string(name), body});
  return tracker_.Write("update-status", ns, body);
}

void FakeDeploymentClient::Set(DeploymentPtr d) {
  tracker_.Put(std::move(d));
}

void FakeDeploymentClient::Fail(const std::string& verb, Error error, int times) {
  tracker_.Fail(verb, std::move(error), times);
}

}  // namespace kcm::controller::testing
