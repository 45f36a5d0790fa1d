// ResourceLock: the object leader election competes for, and the record it holds (client-go's
// resourcelock.Interface and LeaderElectionRecord). Implementations are thread-safe; the elector
// calls one lock from its single thread.
#pragma once

#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/api/object_meta.h"
#include "pkg/util/result.h"

namespace kcm::leaderelection {

// The lease as leader election reads and writes it (L1).
struct LeaderElectionRecord {
  std::string holder_identity;  // "" = nobody holds it (released)
  int32_t lease_duration_seconds = 0;
  std::optional<api::Time> acquire_time;
  std::optional<api::Time> renew_time;
  int32_t leader_transitions = 0;

  friend bool operator==(const LeaderElectionRecord&, const LeaderElectionRecord&) = default;
};

class ResourceLock {
 public:
  virtual ~ResourceLock() = default;
  // The current record; an error with IsNotFound when the object does not exist.
  virtual Result<LeaderElectionRecord> Get(std::stop_token stop) = 0;
  // Creates the object holding `record`.
  virtual Status Create(const LeaderElectionRecord& record, std::stop_token stop) = 0;
  // Replaces the record, conditional on the resourceVersion of the lock's last Get/Create/Update
  // (a Conflict when someone else wrote in between). Fails if neither Get nor Create succeeded.
  virtual Status Update(const LeaderElectionRecord& record, std::stop_token stop) = 0;
  // Records an event about the lock object: "<identity> <message>" (no-op without a recorder).
  virtual void RecordEvent(std::string_view message) = 0;
  // "namespace/name", for logs.
  virtual std::string Describe() const = 0;
  // Who this candidate is.
  virtual std::string Identity() const = 0;
};

}  // namespace kcm::leaderelection
