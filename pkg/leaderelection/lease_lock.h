// LeaseLock: the ResourceLock over a coordination.k8s.io/v1 Lease (client-go's
// resourcelock.LeaseLock). Thread-safe (one mutex around every call).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "pkg/api/decoder.h"
#include "pkg/api/lease.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/leaderelection/resource_lock.h"
#include "pkg/record/event_recorder.h"

namespace kcm::leaderelection {

class LeaseLock final : public ResourceLock {
 public:
  // `recorder` (optional) receives "became leader" / "stopped leading" events on the Lease.
  LeaseLock(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
            std::string lease_name, std::string identity,
            std::shared_ptr<record::EventRecorder> recorder = nullptr);

  Result<LeaderElectionRecord> Get(std::stop_token stop) override;
  Status Create(const LeaderElectionRecord& record, std::stop_token stop) override;
  Status Update(const LeaderElectionRecord& record, std::stop_token stop) override;
  void RecordEvent(std::string_view message) override;
  std::string Describe() const override;
  std::string Identity() const override { return identity_; }

  // Annotations written onto the Lease with every later create and renewal (a key set here
  // replaces the object's; other annotations are kept). For what a holder publishes about itself
  // (the shard-work of docs/design/sharding.md); upstream's LeaseLock has no such field.
  void SetAnnotations(std::map<std::string, std::string> annotations);

 private:
  // Decodes a server answer into lease_ (the base of the next Update).
  Status Remember(Result<std::string> body);

  client::ResourceClient leases_;
  const std::string namespace_;
  const std::string name_;
  const std::string identity_;
  const std::shared_ptr<record::EventRecorder> recorder_;

  std::mutex mu_;
  api::Decoder decoder_;                     // guarded by mu_
  std::shared_ptr<const api::Lease> lease_;  // guarded by mu_; last object seen from the server
  std::map<std::string, std::string> annotations_;  // guarded by mu_
};

// Conversions between the Lease spec and the record (resourcelock's LeaseSpecToLeaderElection-
// Record and back; every field is written, as upstream does).
LeaderElectionRecord LeaseSpecToRecord(const api::LeaseSpec& spec);
api::LeaseSpec RecordToLeaseSpec(const LeaderElectionRecord& record);

}  // namespace kcm::leaderelection
