// ShardManager: one replica of `--sharding=namespace`. The replicas divide the cluster's
// namespaces among themselves (docs/design/sharding.md):
// - each holds a member Lease `<name>-member-<hash of its identity>`, renewed as a leader's;
// - the ShardMap in the annotation of Lease `<name>-shards` says which replica serves which range
//   of namespace hashes; it changes only by compare-and-swap, each change one of the rules of
//   assignment.h (a replica hands on its own ranges; anyone gives a dead replica's ranges to
//   their desired owner; the coordinator — the holder of Lease `<name>` — asks for handoffs when
//   the load is uneven);
// - its ranges are served by a Serving (the daemon's: ServedRanges, the caches of the controllers
//   it runs once), each range stopped — none of its writes in flight — before it is handed on.
// Thread-safe: Run on one thread; Ready from any.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include "pkg/api/shard_selector.h"
#include "pkg/client/rest_client.h"
#include "pkg/record/event_recorder.h"
#include "pkg/sharding/served_work.h"
#include "pkg/sharding/serving.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::sharding {

struct ShardManagerConfig {
  // Reads and writes the Leases and reads namespaces; give it a request timeout no longer than
  // the renew deadline (as the leader election client).
  std::shared_ptr<client::RestClient> client;
  // Lists and watches the Leases and namespaces (no request timeout: it holds watches).
  std::shared_ptr<client::RestClient> informer_client;
  std::string lease_namespace;  // --leader-elect-resource-namespace
  std::string name;             // --leader-elect-resource-name
  std::string identity;         // this replica, unique per process
  Clock::duration lease_duration = std::chrono::seconds(15);
  Clock::duration renew_deadline = std::chrono::seconds(10);
  Clock::duration retry_period = std::chrono::seconds(2);
  // How far the clocks of two replicas may disagree (Membership).
  Clock::duration clock_skew = std::chrono::seconds(2);
  std::shared_ptr<record::EventRecorder> recorder;  // events on the coordinator Lease; optional
  // Makes what serves the ranges, given what to call when serving failed (the ShardManager then
  // stops, and Run returns the error).
  std::function<std::unique_ptr<Serving>(std::function<void(Error)> failed)> new_serving;
  // The objects of the served ranges (the controllers' caches); published at most every 10 s as
  // this replica's shard-work (docs/design/sharding.md, "Balance by work"). Null: nothing is
  // published and this replica's namespaces count one each.
  std::shared_ptr<ServedWork> served_work;
  Clock* clock = nullptr;  // null = RealClock
};

class ShardManager {
 public:
  static Result<std::unique_ptr<ShardManager>> Create(ShardManagerConfig config);
  ~ShardManager();
  ShardManager(const ShardManager&) = delete;
  ShardManager& operator=(const ShardManager&) = delete;

  // Joins, serves this replica's share until `stop`, then stops serving, hands its ranges to the
  // other live replicas and gives its member Lease back. An error when the member Lease was lost
  // (the process must exit, as upstream's controller manager does on a lost lease) or serving
  // failed.
  Status Run(std::stop_token stop);

  // /readyz: the member Lease is held and every range this replica owns is being served.
  Status Ready() const;
  // /healthz's "leaderElection" in sharded mode: the member Lease's elector check (a stuck
  // elector, or renewals of a held member Lease failing for a retry period).
  Status Healthy() const;
  // Whether this replica currently coordinates (holds Lease `<name>`).
  bool Coordinating() const;

  static std::string MapLeaseName(const std::string& name);
  static std::string MemberLeaseName(const std::string& name, const std::string& identity);

  struct Impl;

 private:
  explicit ShardManager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcm::sharding
