// RunControllers: the work of a leader (or of a shard's serve call): informers, controllers,
// their supervision until stop.
#include "cmd/kube-controller-manager/app/run_mode.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/util/klog.h"

namespace kcm::app {

Status RunControllers(const RunContext& rc, ControllerReadiness& ready, std::stop_token stop,
                      const api::ShardSelector* shard,
                      informers::ShardFilterObserver shard_observer,
                      sharding::ServedWork* served_work) {
  const Options& options = rc.options;
  auto informer_client = rc.clients.ClientFor("shared-informers");
  if (!informer_client.ok()) return informer_client.error();
  informers::SharedInformerFactoryOptions fo;
  if (shard != nullptr) fo.shard_selector = *shard;
  fo.shard_filter_observer = std::move(shard_observer);
  informers::SharedInformerFactory factory(*informer_client,
                                           ResyncPeriod(options.min_resync_period), fo);
  // `stop` is the leader's "leading" token: the controllers' writers are fenced with it.
  ControllerContext ctx{options,          rc.clients, factory,       rc.broadcaster,
                        RealClock::Get(), stop,       rc.events_sink};

  std::vector<NamedController> controllers;
  for (auto& [name, init] : NewControllerInitializers()) {
    if (!IsControllerEnabled(name, options.controllers)) {
      KLOG_INFOS("Warning: controller is disabled", "controller", name);
      continue;
    }
    KLOG_INFOS("Starting controller", "controller", name);
    auto c = init(ctx);
    if (!c.ok()) {
      return Error::Local("ControllerStartFailed",
                          "error starting \"" + name + "\": " + c.error().ToString());
    }
    controllers.emplace_back(name, std::move(*c));
    KLOG_INFOS("Started controller", "controller", name);
  }

  // The shard's pods and ReplicaSets are the work this replica publishes (docs/design/
  // sharding.md, "Balance by work"), counted while these controllers run.
  std::shared_ptr<void> counted;
  if (served_work != nullptr) {
    counted = served_work->Add(
        {factory.Pods().informer->GetIndexer(), factory.ReplicaSets().informer->GetIndexer()});
  }
  Status s = SuperviseControllers(
      controllers,
      [&](std::stop_token running) {
        factory.Start(stop);
        bool all_synced = true;
        for (const auto& [resource, synced] : factory.WaitForCacheSync(running)) {
          if (!synced) all_synced = false;
          KLOG_V_INFOS(1, "Informer cache", "resource", resource, "synced", synced);
        }
        ready.informers_synced = all_synced && !running.stop_requested();
        if (!ready.informers_synced) return;
        // A serve call names its ranges: several run side by side in one sharded replica.
        if (shard != nullptr) {
          KLOG_INFOS("Caches are synced", "shardSelector", shard->String());
        } else {
          KLOG_INFOS("Caches are synced");
        }
      },
      ready, stop);
  counted.reset();
  KLOG_INFOS("Controllers stopped");
  factory.Shutdown();
  ready.informers_synced = false;
  ready.enabled = 0;
  return s;
}

}  // namespace kcm::app
