#include "pkg/leaderelection/lease_lock.h"

#include <utility>

#include "pkg/api/json_input.h"

namespace kcm::leaderelection {
namespace {}  // namespace

LeaderElectionRecord LeaseSpecToRecord(const api::LeaseSpec& spec) {
  LeaderElectionRecord r;
  r.holder_identity = spec.holder_identity.value_or("");
  r.lease_duration_seconds = spec.lease_duration_seconds.value_or(0);
  r.acquire_time = spec.acquire_time;
  r.renew_time = spec.renew_time;
  r.leader_transitions = spec.lease_transitions.value_or(0);
  return r;
}

api::LeaseSpec RecordToLeaseSpec(const LeaderElectionRecord& record) {
  api::LeaseSpec spec;
  spec.holder_identity = record.holder_identity;
  spec.lease_duration_seconds = record.lease_duration_seconds;
  spec.acquire_time = record.acquire_time;
  spec.renew_time = record.renew_time;
  spec.lease_transitions = record.leader_transitions;
  return spec;
}

LeaseLock::LeaseLock(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
                     std::string lease_name, std::string identity,
                     std::shared_ptr<record::EventRecorder> recorder)
    : leases_(std::move(client), api::kLeases),
      namespace_(std::move(lease_namespace)),
      name_(std::move(lease_name)),
      identity_(std::move(identity)),
      recorder_(std::move(recorder)) {}

Result<LeaderElectionRecord> LeaseLock::Get(std::stop_token stop) {
  std::lock_guard lock(mu_);
  if (Status s = Remember(leases_.Get(namespace_, name_, {}, stop)); !s.ok()) return s.error();
  return LeaseSpecToRecord(lease_->spec);
}

Status LeaseLock::Create(const LeaderElectionRecord& record, std::stop_token stop) {
  api::Lease lease;
  lease.metadata.name = name_;
  lease.metadata.namespace_ = namespace_;
  lease.spec = RecordToLeaseSpec(record);
  std::lock_guard lock(mu_);
  for (const auto& [k, v] : annotations_) lease.metadata.annotations.Set(k, v);
  auto body = lease.ToJson();
  if (!body.ok()) return body.error();
  return Remember(leases_.Create(namespace_, std::move(body).value(), {}, stop));
}

Status LeaseLock::Update(const LeaderElectionRecord& record, std::stop_token stop) {
  std::lock_guard lock(mu_);
  if (!lease_) {
    return Error::Local("LeaseNotInitialized", "lease not initialized, call get or create first");
  }
  // Written onto the last object seen, so its resourceVersion makes the write conditional and
  // fields we do not model survive.
  api::Lease next = *lease_;
  next.spec = RecordToLeaseSpec(record);
  for (const auto& [k, v] : annotations_) {
    auto it = next.metadata.annotations.find(k);
    if (it == next.metadata.annotations.end() || it->second != v) {
      next.metadata.annotations.Set(k, v);
    }
  }
  auto body = next.ToJson();
  if (!body.ok()) return body.error();
  return Remember(leases_.Update(namespace_, name_, std::move(body).value(), {}, stop));
}

void LeaseLock::SetAnnotations(std::map<std::string, std::string> annotations) {
  std::lock_guard lock(mu_);
  annotations_ = std::move(annotations);
}

Status LeaseLock::Remember(Result<std::string> body) {
  if (!body.ok()) return body.error();
  auto lease = api::DecodeLease(decoder_, api::JsonInput(*body));
  if (!lease.ok()) return lease.error();
  lease_ = std::move(lease).value();
  return OkStatus();
}

void LeaseLock::RecordEvent(std::string_view message) {
  if (!recorder_) return;
  record::ObjectReference ref;
  ref.kind = "Lease";
  ref.api_version = "coordination.k8s.io/v1";
  ref.namespace_ = namespace_;
  ref.name = name_;
  {
    std::lock_guard lock(mu_);
    if (lease_) {
      ref.uid = lease_->metadata.uid;
      ref.resource_version = lease_->metadata.resource_version;
    }
  }
  recorder_->Event(ref, record::kEventTypeNormal, "LeaderElection",
                   identity_ + " " + std::string(message));
}

std::string LeaseLock::Describe() const {
  return namespace_ + "/" + name_;
}

}  // namespace kcm::leaderelection
