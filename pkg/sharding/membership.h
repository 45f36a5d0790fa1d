// Membership: which replicas of `--sharding=namespace` may still be serving, and which may be
// given ranges, judged from their member Leases (`<group>-member-<hash of identity>`,
// MemberLeaseName) as the Lease informer and fresh reads show them. Thread-compatible.
//
// A replica may still be serving until a lease duration after the last change of its Lease we
// saw, on our own clock (client-go's observed-time rule: no other machine's clock involved), or
// after we saw the Lease deleted, released or taken by another holder (the replica learns it only
// at its next renewal). When it holds its Lease, its renewTime may call it dead sooner — so a
// replica that has just started need not wait a whole lease duration to take over a dead one's
// ranges — allowing `skew` for clocks that disagree. Both are safe because a replica stops
// serving when it has not renewed within the renew deadline, `lease duration − renew deadline`
// (5 s by default) before anyone calls it dead (docs/design/sharding.md).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/decoder.h"
#include "pkg/api/optional_time.h"
#include "pkg/cache/indexer.h"
#include "pkg/client/resource_client.h"
#include "pkg/sharding/shard_map.h"
#include "pkg/sharding/shard_work.h"
#include "pkg/util/clock.h"

namespace kcm::sharding {

// The member Lease of `identity` in the group `name` (--leader-elect-resource-name). Identities
// ("<host>_<uuid>") are not valid object names; their hash is.
std::string MemberLeaseName(const std::string& name, const std::string& identity);

// A member Lease as read from the API server.
struct MemberLease {
  std::string name;
  std::string holder;  // spec.holderIdentity; "" once released
  std::string resource_version;
  std::optional<api::Time> renew_time;
  int32_t lease_duration_seconds = 0;
  std::optional<std::string> shard_work;  // its kShardWorkAnnotation, as published
};

class Membership {
 public:
  // `fresh`: how recently a replica must have renewed to be given ranges (a few retry periods):
  // a replica killed a moment ago may still serve for a lease duration, but giving it the ranges
  // of another dead replica would leave them unserved until it too is found dead.
  Membership(std::string group, Clock& clock, Clock::duration skew, Clock::duration fresh)
      : group_(std::move(group)), clock_(clock), skew_(skew), fresh_(fresh) {}

  // Every member Lease the informer holds now; a Lease gone from it counts as deleted.
  void Update(const std::vector<MemberLease>& leases);
  // One Lease read now from the server (a quorum read: the informer may lag).
  void Observe(const MemberLease& lease);
  // The server answered NotFound for this Lease.
  void Deleted(const std::string& lease_name);

  // Replicas that may still be serving: their ranges must not be given to anyone else.
  std::set<std::string> MayServe() const;
  // Replicas that hold their own Lease and renewed it within `fresh`: they may be given ranges.
  std::set<std::string> Members() const;
  // Leases whose replica is dead for longer than `grace` (to delete).
  std::vector<std::string> Stale(Clock::duration grace) const;

 private:
  struct Seen {
    MemberLease lease;          // the latest version seen
    std::string member;         // the identity this Lease belongs to, once seen holding it
    Clock::time_point changed;  // when we saw it change (or go)
    bool deleted = false;
  };
  bool Alive(const Seen& s) const;

  const std::string group_;
  Clock& clock_;
  const Clock::duration skew_;
  const Clock::duration fresh_;
  std::map<std::string, Seen> seen_;  // by Lease name
};

// Who may still be serving (`may_serve`: their ranges stay theirs) and who may be given ranges
// (`members`).
struct LiveMembers {
  std::set<std::string> may_serve;
  std::set<std::string> members;
  // The work each of `members` published in its Lease, where it parsed (shard_work.h); a member
  // missing here counts its namespaces one each.
  std::map<std::string, ShardWork> work;
};

// MemberLeases: Membership fed from the API server: the member Leases of the group `name` as the
// Lease informer holds them, and a fresh read of each owner that looks dead. Thread-compatible
// (one replica's loop).
class MemberLeases {
 public:
  MemberLeases(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
               std::string name, std::string identity, Clock& clock, Clock::duration skew,
               Clock::duration fresh);

  // Who is live now, this replica included in both sets. An owner or next of `map` that looks
  // dead is declared dead only on a fresh GET of its Lease (the informer may lag behind its
  // renewals); one that cannot be read stays alive.
  LiveMembers Judge(cache::Indexer& cached, const ShardMap& map, std::stop_token stop);
  // Deletes the Leases of replicas dead for a minute (each start joins under a new identity, so
  // they would pile up), each on the resourceVersion that was judged.
  void DeleteStale(cache::Indexer& cached, std::stop_token stop);

 private:
  // A member Lease through the Lease codec; nullopt when it does not decode.
  std::optional<MemberLease> Decode(std::string_view raw);

  client::ResourceClient leases_;
  const std::string namespace_;
  const std::string name_;
  const std::string identity_;
  Membership membership_;
  api::Decoder decoder_;
};

}  // namespace kcm::sharding
