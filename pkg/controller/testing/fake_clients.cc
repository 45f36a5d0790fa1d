#include "pkg/controller/testing/fake_clients.h"

#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/api_errors.h"

namespace kcm::controller::testing {
namespace {

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

std::string NameOf(const std::string& body) {
  auto v = api::json::Parse(body);
  if (!v.ok()) return "";
  const api::json::Value* name = api::json::GetPath(*v, {"metadata", "name"});
  return name != nullptr ? name->as_string() : "";
}

}  // namespace

void FailureTable::Set(const std::string& verb, Error error, int times) {
  entries_.insert_or_assign(verb, Entry{std::move(error), times});
}

void FailureTable::Clear(const std::string& verb) {
  entries_.erase(verb);
}

std::optional<Error> FailureTable::Take(const std::string& verb) {
  auto it = entries_.find(verb);
  if (it == entries_.end()) return std::nullopt;
  Error error = it->second.error;
  if (it->second.times > 0 && --it->second.times == 0) entries_.erase(it);
  return error;
}

// --- FakeReplicaSetClient ---

Result<ReplicaSetPtr> FakeReplicaSetClient::Get(std::string_view ns, std::string_view name) {
  log_->Record({"get", "replicasets", std::string(ns), std::string(name), ""});
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take("get")) return *e;
  auto it = objects_.find(Key(ns, name));
  if (it == objects_.end()) return NotFound("replicasets.apps", name);
  return it->second;
}

Result<ReplicaSetPtr> FakeReplicaSetClient::Store(const std::string& verb, std::string_view ns,
                                                  std::string body) {
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take(verb)) return *e;
  Result<std::string> stored = AsStored(verb, body, ++rv_);
  if (!stored.ok()) return stored.error();
  Result<ReplicaSetPtr> rs = DecodeReplicaSetBody(*stored);
  if (!rs.ok()) return rs.error();
  objects_[Key(ns, (*rs)->metadata.name)] = *rs;
  return rs;
}

Result<ReplicaSetPtr> FakeReplicaSetClient::Create(std::string_view ns, std::string body) {
  log_->Record({"create", "replicasets", std::string(ns), NameOf(body), body});
  return Store("create", ns, std::move(body));
}

Result<ReplicaSetPtr> FakeReplicaSetClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  log_->Record({"update", "replicasets", std::string(ns), std::string(name), body});
  return Store("update", ns, std::move(body));
}

Result<ReplicaSetPtr> FakeReplicaSetClient::UpdateStatus(const api::ReplicaSet& rs,
                                                         const api::ReplicaSetStatus& status) {
  // Objects built field by field in tests have no raw JSON to encode; the log then has no body.
  Result<std::string> body = api::EncodeReplicaSetStatus(rs, status);
  log_->Record({"update-status", "replicasets", rs.metadata.namespace_, rs.metadata.name,
                body.ok() ? *body : ""});
  std::lock_guard lock(mu_);
  status_writes_.push_back({rs.metadata.resource_version, status});
  if (auto e = failures_.Take("update-status")) return *e;
  auto updated = std::make_shared<api::ReplicaSet>(rs);
  updated->status = status;
  if (drop_terminating_) updated->status.terminating_replicas.reset();
  updated->metadata.resource_version =
      next_status_rv_ ? std::to_string((*next_status_rv_)++) : rs.metadata.resource_version + "+";
  objects_[Key(rs.metadata.namespace_, rs.metadata.name)] = updated;
  return ReplicaSetPtr(updated);
}

Status FakeReplicaSetClient::Patch(std::string_view ns, std::string_view name,
                                   const std::string& patch) {
  log_->Record({"patch", "replicasets", std::string(ns), std::string(name), patch});
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take("patch")) return *e;
  return OkStatus();
}

Status FakeReplicaSetClient::Delete(std::string_view ns, std::string_view name,
                                    std::string_view /*uid*/) {
  log_->Record({"delete", "replicasets", std::string(ns), std::string(name), ""});
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take("delete")) return *e;
  objects_.erase(Key(ns, name));
  return OkStatus();
}

void FakeReplicaSetClient::Set(ReplicaSetPtr rs) {
  std::lock_guard lock(mu_);
  objects_[Key(rs->metadata.namespace_, rs->metadata.name)] = std::move(rs);
}

void FakeReplicaSetClient::Fail(const std::string& verb, Error error, int times) {
  std::lock_guard lock(mu_);
  failures_.Set(verb, std::move(error), times);
}

void FakeReplicaSetClient::ClearFailure(const std::string& verb) {
  std::lock_guard lock(mu_);
  failures_.Clear(verb);
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
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take("get")) return *e;
  auto it = objects_.find(Key(ns, name));
  if (it == objects_.end()) return NotFound("deployments.apps", name);
  return it->second;
}

Result<DeploymentPtr> FakeDeploymentClient::Store(const std::string& verb, std::string_view ns,
                                                  std::string_view name, std::string body) {
  log_->Record({verb, "deployments", std::string(ns), std::string(name), body});
  std::lock_guard lock(mu_);
  if (auto e = failures_.Take(verb)) return *e;
  Result<std::string> stored = AsStored(verb, body, ++rv_);
  if (!stored.ok()) return stored.error();
  Result<DeploymentPtr> d = DecodeDeploymentBody(*stored);
  if (!d.ok()) return d.error();
  objects_[Key(ns, name)] = *d;
  return d;
}

Result<DeploymentPtr> FakeDeploymentClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  return Store("update", ns, name, std::move(body));
}

Result<DeploymentPtr> FakeDeploymentClient::UpdateStatus(std::string_view ns, std::string_view name,
                                                         std::string body) {
  return Store("update-status", ns, name, std::move(body));
}

void FakeDeploymentClient::Set(DeploymentPtr d) {
  std::lock_guard lock(mu_);
  objects_[Key(d->metadata.namespace_, d->metadata.name)] = std::move(d);
}

void FakeDeploymentClient::Fail(const std::string& verb, Error error, int times) {
  std::lock_guard lock(mu_);
  failures_.Set(verb, std::move(error), times);
}

}  // namespace kcm::controller::testing
