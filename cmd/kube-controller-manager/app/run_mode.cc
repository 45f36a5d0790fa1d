// NewRunMode and the standalone mode (--leader-elect=false): the controllers run from start to
// stop, with nothing to fence their writes but the process's life.
#include "cmd/kube-controller-manager/app/run_mode.h"

#include "pkg/server/secure_server.h"

namespace kcm::app {
namespace {

class StandaloneMode final : public RunMode {
 public:
  explicit StandaloneMode(const RunContext& ctx) : ctx_(ctx) {}

  void AddChecks(server::SecureServer& server) override {
    server.AddReadyCheck({"informer-sync", [this] { return ready_.InformersSynced(); }});
    server.AddReadyCheck({"controllers", [this] { return ready_.ControllersRunning(); }});
  }

  Status Run(std::stop_token stop) override { return RunControllers(ctx_, ready_, stop); }

 private:
  const RunContext ctx_;
  ControllerReadiness ready_;
};

}  // namespace

Result<std::unique_ptr<RunMode>> NewRunMode(const RunContext& ctx) {
  const auto& options = ctx.options;
  if (!options.leader_election.leader_elect) {
    return std::unique_ptr<RunMode>(std::make_unique<StandaloneMode>(ctx));
  }
  if (options.sharding == "namespace") return NewShardedMode(ctx);
  return NewLeaderElectedMode(ctx);
}

}  // namespace kcm::app
