// The sharded mode (--sharding=namespace): one set of controllers for the replica's life, whose
// caches and writes the ShardManager gives the ranges of namespaces the replica serves
// (docs/design/sharding.md, "Serving a share"). Its member Lease fences the replica's writes as the
// leader's Lease does in the leader-elected mode.
#include <atomic>
#include <thread>

#include "cmd/kube-controller-manager/app/run_mode.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/metrics/metrics.h"
#include "pkg/server/secure_server.h"
#include "pkg/sharding/served_ranges.h"
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
  ShardedMode(const RunContext& ctx, std::unique_ptr<informers::SharedInformerFactory> factory,
              std::shared_ptr<controller::NamespaceFence> fence,
              std::shared_ptr<sharding::ServedWork> served_work, std::stop_source controllers)
      : ctx_(ctx),
        factory_(std::move(factory)),
        fence_(std::move(fence)),
        served_work_(std::move(served_work)),
        controllers_(std::move(controllers)) {}

  // Made after the mode, since what serves its ranges holds the mode's factory and fence.
  void SetShards(std::unique_ptr<sharding::ShardManager> shards) { shards_ = std::move(shards); }

  void AddChecks(server::SecureServer& server) override {
    // The member Lease fences this replica's writes as the leader's Lease does otherwise.
    server.AddHealthCheck({"leaderElection", [this] { return shards_->Healthy(); }});
    server.AddReadyCheck({"shards", [this] { return shards_->Ready(); }});
  }

  // The controllers run once, for the replica's life; the ShardManager gives their caches and
  // their writes the ranges the replica serves (ServedRanges). Either ending ends the other.
  // The ShardManager stops the controllers (`controllers_`, their writers' token) when its member
  // Lease is lost or it stops, before it hands the ranges on (ServedRanges::StopForGood).
  Status Run(std::stop_token stop) override {
    std::stop_source shards_stop;
    std::stop_callback forward(stop, [&shards_stop] { shards_stop.request_stop(); });
    Status controllers = OkStatus();
    std::jthread run([&] {
      controllers = RunControllersWith(ctx_, ready_, controllers_.get_token(), *factory_, fence_,
                                       served_work_.get());
      shards_stop.request_stop();
    });
    Status shards = shards_->Run(shards_stop.get_token());
    controllers_.request_stop();  // had it not run at all
    run.join();
    if (!shards.ok()) return shards;
    if (!controllers.ok()) return controllers;
    if (!stop.stop_requested()) {
      return Error::Local("ControllersStopped", "the controllers stopped before the replica did");
    }
    return OkStatus();
  }

 private:
  const RunContext ctx_;
  ControllerReadiness ready_;  // the ShardManager reports readiness
  const std::unique_ptr<informers::SharedInformerFactory> factory_;
  const std::shared_ptr<controller::NamespaceFence> fence_;
  const std::shared_ptr<sharding::ServedWork> served_work_;
  std::stop_source controllers_;
  // Last: stopped (its ranges too) before the factory and fence it serves them with go.
  std::unique_ptr<sharding::ShardManager> shards_;
};

}  // namespace

Result<std::unique_ptr<RunMode>> NewShardedMode(const RunContext& ctx) {
  const auto& le = ctx.options.leader_election;
  auto identity = leaderelection::NewIdentity();
  if (!identity.ok()) return identity.error();
  auto informer_client = ctx.clients.ClientFor("sharding");
  if (!informer_client.ok()) return informer_client.error();
  auto controllers_informer_client = ctx.clients.ClientFor("shared-informers");
  if (!controllers_informer_client.ok()) return controllers_informer_client.error();
  KLOG_INFOS("Sharding by namespace", "identity", *identity, "leases",
             le.resource_namespace + "/" + le.resource_name + "*");
  // The controllers' informers: a source per served range, pods first (ServedRanges).
  informers::SharedInformerFactoryOptions fo;
  fo.shard_sources = true;
  fo.shard_source_order = {informers::InformerKey(informers::PodsResource()),
                           informers::InformerKey(informers::ReplicaSetsResource()),
                           informers::InformerKey(informers::DeploymentsResource())};
  fo.shard_filter_observer = NewServerSideFilteringObserver();
  auto factory = std::make_unique<informers::SharedInformerFactory>(
      std::move(*controllers_informer_client), ResyncPeriod(ctx.options.min_resync_period), fo);
  // The controllers' informers exist before the first range is served: a range's sources are
  // then added to all three in order, each synced before the next (an informer made later would
  // get its source at once, in no order). The controllers take these same informers.
  (void)factory->Pods();
  (void)factory->ReplicaSets();
  (void)factory->Deployments();
  auto fence = std::make_shared<controller::NamespaceFence>();  // closed until a range is served
  auto served_work = std::make_shared<sharding::ServedWork>();
  informers::SharedInformerFactory& factory_ref = *factory;
  std::stop_source controllers;
  auto mode =
      std::make_unique<ShardedMode>(ctx, std::move(factory), fence, served_work, controllers);

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
  sc.served_work = served_work;
  sc.new_serving = [&factory_ref, fence, controllers](std::function<void(Error)> failed) {
    return std::unique_ptr<sharding::Serving>(std::make_unique<sharding::ServedRanges>(
        factory_ref, fence, controllers, std::move(failed)));
  };
  auto shards = sharding::ShardManager::Create(std::move(sc));
  if (!shards.ok()) return shards.error();
  mode->SetShards(std::move(*shards));
  return std::unique_ptr<RunMode>(std::move(mode));
}

}  // namespace kcm::app
