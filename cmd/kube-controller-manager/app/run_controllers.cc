// RunControllers: the work of a leader (or of a sharded replica): informers, controllers, their
// supervision until stop.
#include "cmd/kube-controller-manager/app/run_mode.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/util/klog.h"

namespace kcm::app {

Status RunControllers(const RunContext& rc, ControllerReadiness& ready, std::stop_token stop) {
  auto informer_client = rc.clients.ClientFor("shared-informers");
  if (!informer_client.ok()) return informer_client.error();
  informers::SharedInformerFactory factory(*informer_client,
                                           ResyncPeriod(rc.options.min_resync_period));
  return RunControllersWith(rc, ready, stop, factory, nullptr, nullptr);
}

Status RunControllersWith(const RunContext& rc, ControllerReadiness& ready, std::stop_token stop,
                          informers::SharedInformerFactory& factory,
                          std::shared_ptr<controller::NamespaceFence> namespaces,
                          sharding::ServedWork* served_work) {
  const Options& options = rc.options;
  // `stop` is the leader's "leading" token: the controllers' writers are fenced with it (and,
  // in a sharded replica, with the namespaces it serves).
  ControllerContext ctx{options,          rc.clients, factory,        rc.broadcaster,
                        RealClock::Get(), stop,       rc.events_sink, std::move(namespaces)};

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

  // The pods and ReplicaSets of the served ranges are the work this replica publishes
  // (docs/design/sharding.md, "Balance by work"), counted while these controllers run.
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
        // A sharded replica's ranges say so as each syncs (ServedRanges).
        KLOG_INFOS("Caches are synced");
      },
      ready, stop);
  counted.reset();
  KLOG_INFOS("Controllers stopped");
  factory.Shutdown();  // idempotent: the caller's factory too
  ready.informers_synced = false;
  ready.enabled = 0;
  return s;
}

}  // namespace kcm::app
