// Membership: which replicas of `--sharding=namespace` are alive, judged from their member Leases
// as the Lease informer shows them. A replica is alive while its Lease names a holder and was
// renewed within its lease duration: as client-go's leader election, by the time we saw the
// record change on our own clock, and — so that a replica that has just started does not wait a
// whole lease duration before taking over a dead one's ranges — also by the Lease's renewTime,
// given `skew` for clocks that disagree. Safe because a
// replica stops serving when it cannot renew within the renew deadline, `lease duration − renew
// deadline` (5 s by default) before anyone may call it dead (docs/design/sharding.md).
// Thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/api/optional_time.h"
#include "pkg/util/clock.h"

namespace kcm::sharding {

// A member Lease as read from the API server.
struct MemberLease {
  std::string name;
  std::string holder;  // spec.holderIdentity; "" once released
  std::string resource_version;
  std::optional<api::Time> renew_time;
  int32_t lease_duration_seconds = 0;
};

class Membership {
 public:
  Membership(Clock& clock, Clock::duration skew) : clock_(clock), skew_(skew) {}

  // Replaces what is known with `leases` (every member Lease the informer holds now).
  void Update(const std::vector<MemberLease>& leases);
  // One Lease read now from the server (a quorum read: what the informer shows may lag, and a
  // replica is declared dead only on a fresh read, docs/design/sharding.md).
  void Observe(const MemberLease& lease);
  // A Lease the server no longer has.
  void Forget(const std::string& name);
  // The holders of the live Leases.
  std::set<std::string> Live() const;
  // Leases dead for longer than `grace` (to delete: a replica that restarts joins anew).
  std::vector<std::string> Stale(Clock::duration grace) const;

 private:
  struct Seen {
    MemberLease lease;
    Clock::time_point changed;  // when we saw its resourceVersion change
  };
  // How long ago the lease was last renewed, by the older of the two witnesses (our observation,
  // its renewTime less `skew`); nullopt when released.
  std::optional<Clock::duration> Age(const Seen& s) const;

  Clock& clock_;
  const Clock::duration skew_;
  std::map<std::string, Seen> seen_;
};

}  // namespace kcm::sharding
