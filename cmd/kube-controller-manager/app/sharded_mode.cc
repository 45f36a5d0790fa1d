// The sharded mode (--sharding=namespace): the replica's ShardManager serves each share of the
// namespaces it gains with informers filtered to the share and controllers of their own
// (docs/design/sharding.md). Its member Lease fences the replica's writes as the leader's Lease
// does in the leader-elected mode.
#include <atomic>

#include "cmd/kube-controller-manager/app/run_mode.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/metrics/metrics.h"
#include "pkg/server/secure_server.h"
#include "pkg/sharding/shard_manager.h"
#include "pkg/util/klog.h"

namespace kcm::app {
namespace {

// Whether the server filters by shardSelector: logged once per change, exported as a gauge.
informers::ShardFilterObserver NewServerSideFilteringObserver() {
  auto told = std::make_shared<std::atomic<int>>(-1);
  const metrics::Gauge server_side =
      metrics::GaugeVec("controller_sharding_server_side_filtering",
                        "1 when the API server filtered this replica's lists and watches by its "
                        "shard selector, 0 when it ignored the selector and this replica "
                        "filtered on its own side.",
                        {})
          .With({});
  return [told, server_side](bool server_filters) {
    server_side.Set(server_filters ? 1 : 0);
    const int now = server_filters ? 1 : 0;
    if (told->exchange(now) == now) return;
    if (server_filters) {
      KLOG_INFOS("The API server filters lists and watches by shardSelector");
    } else {
      KLOG_WARNINGS(
          "the API server ignores shardSelector (older than v1.36 or its ShardedListAndWatch "
          "feature gate is off): every replica receives every object and keeps only its share");
    }
  };
}

class ShardedMode final : public RunMode {
 public:
  explicit ShardedMode(std::unique_ptr<sharding::ShardManager> shards)
      : shards_(std::move(shards)) {}

  void AddChecks(server::SecureServer& server) override {
    // The member Lease fences this replica's writes as the leader's Lease does otherwise.
    server.AddHealthCheck({"leaderElection", [this] { return shards_->Healthy(); }});
    server.AddReadyCheck({"shards", [this] { return shards_->Ready(); }});
  }

  Status Run(std::stop_token stop) override { return shards_->Run(stop); }

 private:
  std::unique_ptr<sharding::ShardManager> shards_;
};

}  // namespace

Result<std::unique_ptr<RunMode>> NewShardedMode(const RunContext& ctx) {
  const auto& le = ctx.options.leader_election;
  auto identity = leaderelection::NewIdentity();
  if (!identity.ok()) return identity.error();
  auto informer_client = ctx.clients.ClientFor("sharding");
  if (!informer_client.ok()) return informer_client.error();
  KLOG_INFOS("Sharding by namespace", "identity", *identity, "leases",
             le.resource_namespace + "/" + le.resource_name + "*");
  sharding::ShardManagerConfig sc;
  sc.client = ctx.election_client;
  sc.informer_client = std::move(*informer_client);
  sc.lease_namespace = le.resource_namespace;
  sc.name = le.resource_name;
  sc.identity = *identity;
  sc.lease_duration = std::chrono::duration_cast<Clock::duration>(le.lease_duration);
  sc.renew_deadline = std::chrono::duration_cast<Clock::duration>(le.renew_deadline);
  sc.retry_period = std::chrono::duration_cast<Clock::duration>(le.retry_period);
  sc.recorder = ctx.broadcaster.NewRecorder({"kube-controller-manager", ""});
  sc.served_work = std::make_shared<sharding::ServedWork>();
  sc.serve = [ctx, observer = NewServerSideFilteringObserver(), served_work = sc.served_work](
                 const api::ShardSelector& shard, std::stop_token stop) {
    ControllerReadiness ready;  // the ShardManager reports readiness
    return RunControllers(ctx, ready, stop, &shard, observer, served_work.get());
  };
  auto shards = sharding::ShardManager::Create(std::move(sc));
  if (!shards.ok()) return shards.error();
  return std::unique_ptr<RunMode>(std::make_unique<ShardedMode>(std::move(*shards)));
}

}  // namespace kcm::app
