// The leader-elected mode: one leader per cluster runs the controllers while it holds the Lease
// (upstream's leaderElectAndRun); a lost lease ends the process (exit 1), a controller failure
// too, after the lease is released.
#include <atomic>
#include <optional>

#include "cmd/kube-controller-manager/app/run_mode.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/server/secure_server.h"
#include "pkg/util/klog.h"

namespace kcm::app {
namespace {

class LeaderElectedMode final : public RunMode {
 public:
  explicit LeaderElectedMode(const RunContext& ctx) : ctx_(ctx) {}

  Status Init() {
    const auto& le = ctx_.options.leader_election;
    auto identity = leaderelection::NewIdentity();
    if (!identity.ok()) {
      return Error::Local("InvalidIdentity", "cannot build a leader election identity: " +
                                                 identity.error().ToString());
    }
    KLOG_INFOS("Leader election identity", "identity", *identity, "lease",
               klog::KRef(le.resource_namespace, le.resource_name));
    leaderelection::LeaderElectionConfig lc;
    lc.lock = std::make_shared<leaderelection::LeaseLock>(
        ctx_.election_client, le.resource_namespace, le.resource_name, *identity,
        ctx_.broadcaster.NewRecorder({"kube-controller-manager", ""}));
    lc.lease_duration = std::chrono::duration_cast<Clock::duration>(le.lease_duration);
    lc.renew_deadline = std::chrono::duration_cast<Clock::duration>(le.renew_deadline);
    lc.retry_period = std::chrono::duration_cast<Clock::duration>(le.retry_period);
    lc.release_on_cancel = true;
    lc.name = le.resource_name;
    lc.callbacks.on_started_leading = [this](std::stop_token leading) {
      Status s = RunControllers(ctx_, ready_, leading);
      if (!s.ok()) {
        failed_ = s.error();
        // Ends the elector's Run: the lease is released, then the process exits 1.
        shutdown_.request_stop();
      }
    };
    lc.callbacks.on_stopped_leading = [this] {
      if (!shutdown_.stop_requested()) {
        KLOG_ERRORS("", "leaderelection lost");
        lost_lease_ = true;
      }
    };
    lc.callbacks.on_new_leader = [id = *identity](const std::string& leader) {
      if (leader != id) KLOG_INFOS("New leader elected", "identity", leader);
    };
    auto e = leaderelection::LeaderElector::Create(std::move(lc));
    if (!e.ok()) {
      return Error::Local("InvalidConfiguration",
                          "invalid leader election configuration: " + e.error().ToString());
    }
    elector_ = std::move(*e);
    return OkStatus();
  }

  void AddChecks(server::SecureServer& server) override {
    server.AddHealthCheck(
        {"leaderElection", [this] { return elector_->Check(std::chrono::seconds(20)); }});
    server.AddReadyCheck({"leader", [this]() -> Status {
                            if (elector_->IsLeader()) return OkStatus();
                            return Error::Local("NotLeader",
                                                "not leading; leader is " + elector_->GetLeader());
                          }});
    server.AddReadyCheck({"informer-sync", [this] { return ready_.InformersSynced(); }});
    server.AddReadyCheck({"controllers", [this] { return ready_.ControllersRunning(); }});
  }

  Status Run(std::stop_token stop) override {
    std::stop_callback forward(stop, [this] { shutdown_.request_stop(); });
    elector_->Run(shutdown_.get_token());
    if (failed_) return *failed_;
    if (lost_lease_) return Error::Local("LeaseLost", "leaderelection lost");
    return OkStatus();
  }

 private:
  const RunContext ctx_;
  std::unique_ptr<leaderelection::LeaderElector> elector_;
  ControllerReadiness ready_;
  std::stop_source shutdown_;
  // Written by the elector's callbacks before its Run returns, read after.
  std::optional<Error> failed_;
  std::atomic<bool> lost_lease_{false};
};

}  // namespace

Result<std::unique_ptr<RunMode>> NewLeaderElectedMode(const RunContext& ctx) {
  auto mode = std::make_unique<LeaderElectedMode>(ctx);
  Status s = mode->Init();
  if (!s.ok()) return s.error();
  return std::unique_ptr<RunMode>(std::move(mode));
}

}  // namespace kcm::app
