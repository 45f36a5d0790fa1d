// The three ways the daemon runs its controllers once it serves: standalone
// (--leader-elect=false), leader-elected (upstream's one leader per cluster), and sharded
// (--sharding=namespace: each replica serves the namespaces its member Lease holds,
// docs/design/sharding.md). `Run` (run.cc) builds what every mode shares — clients, the event
// broadcaster, the secure server — then asks the mode for its health and readiness checks and
// runs it until stop.
#pragma once

#include <memory>
#include <stop_token>

#include "cmd/kube-controller-manager/app/controller_context.h"
#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/client/rest_client.h"
#include "pkg/record/event_broadcaster.h"
#include "pkg/record/event_sink.h"
#include "pkg/sharding/served_work.h"
#include "pkg/util/result.h"

namespace kcm::server {
class SecureServer;
}

namespace kcm::app {

// What every mode runs its controllers with; each reference outlives the mode.
struct RunContext {
  const Options& options;
  const ClientBuilder& clients;
  record::EventBroadcaster& broadcaster;
  std::shared_ptr<record::EventSink> events_sink;
  // Leader election's own client (its timeout is the renew deadline).
  std::shared_ptr<client::RestClient> election_client;
};

class RunMode {
 public:
  virtual ~RunMode() = default;
  // Adds the mode's /healthz and /readyz checks; called once, before the server starts. The
  // checks may be called until the server stops, which is before the mode is destroyed.
  virtual void AddChecks(server::SecureServer& server) = 0;
  // Runs until `stop` or a fatal error: an error when a controller failed or the lease was lost
  // (the process then exits 1, as upstream's).
  virtual Status Run(std::stop_token stop) = 0;
};

// The mode the flags select: --leader-elect=false standalone; --sharding=namespace sharded;
// otherwise leader-elected. An error when its identity or configuration is invalid.
Result<std::unique_ptr<RunMode>> NewRunMode(const RunContext& ctx);

// Builds the controllers, starts the informers and runs until stop, reporting into `ready`. An
// error when a controller cannot be built or fails while running (upstream's StartControllers
// error). The informers are those of a factory made here for every namespace
// (run_controllers.cc).
Status RunControllers(const RunContext& ctx, ControllerReadiness& ready, std::stop_token stop);
// The same on `factory` (the caller's; it shuts it down), for a sharded replica: `namespaces`
// admits its writers' writes, and `served_work` counts the pods and ReplicaSets of its caches as
// the work the replica publishes.
Status RunControllersWith(const RunContext& ctx, ControllerReadiness& ready, std::stop_token stop,
                          informers::SharedInformerFactory& factory,
                          std::shared_ptr<controller::NamespaceFence> namespaces,
                          sharding::ServedWork* served_work);

// The modes, for NewRunMode.
Result<std::unique_ptr<RunMode>> NewLeaderElectedMode(const RunContext& ctx);
Result<std::unique_ptr<RunMode>> NewShardedMode(const RunContext& ctx);

}  // namespace kcm::app
