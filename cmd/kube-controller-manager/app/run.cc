#include "cmd/kube-controller-manager/app/run.h"

#include "cmd/kube-controller-manager/app/component_metrics.h"
#include "cmd/kube-controller-manager/app/controller_context.h"
#include "cmd/kube-controller-manager/app/flags.h"
#include "cmd/kube-controller-manager/app/operator_endpoints.h"
#include "cmd/kube-controller-manager/app/run_mode.h"
#include "cmd/kube-controller-manager/app/secure_serving.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/client/user_agent.h"
#include "pkg/record/client_event_sink.h"
#include "pkg/record/event_broadcaster.h"
#include "pkg/util/klog.h"

namespace kcm::app {
namespace {

// Waits until the API server answers /healthz, logging why not, with a capped backoff. Returns
// false if stopped first. An unreachable server is an operational state, not a crash.
bool WaitForAPIServer(client::RestClient& client, const std::string& host, std::stop_token stop) {
  auto delay = std::chrono::seconds(1);
  for (int attempt = 1;; ++attempt) {
    client::Request req;
    req.path = "/healthz";
    auto r = client.Do(req, stop);
    if (r.ok()) {
      if (attempt > 1) KLOG_INFOS("API server is reachable", "host", host);
      return true;
    }
    if (stop.stop_requested()) return false;
    KLOG_ERRORS(r.error().ToString(), "waiting for the API server", "host", host, "attempt",
                attempt, "retryAfter", delay);
    if (!RealClock::Get().SleepFor(delay, stop)) return false;
    delay = std::min(delay * 2, std::chrono::seconds(30));
  }
}

}  // namespace

int Run(const Options& options, const BuildInfo& build,
        const std::map<std::string, std::string>& flag_values, std::stop_token stop) {
  KLOG_INFOS("Version", "version", build.version, "commit", build.commit);
  KLOG_INFOS("Flags", "effective", EffectiveFlags(options));
  RegisterBuildInfo(build);
  RecordFeatureInfo(options.feature_gates);

  auto config = client::BuildConfigFromFlags(options.master, options.kubeconfig);
  if (!config.ok()) {
    KLOG_ERRORS(config.error().ToString(), "invalid client configuration");
    return 1;
  }
  config->content_type = options.kube_api_content_type;
  config->qps = static_cast<float>(options.kube_api_qps);
  config->burst = options.kube_api_burst;
  config->user_agent = client::DefaultUserAgent(
      {"kube-controller-manager", build.version, "linux", "amd64", build.commit});
  ClientBuilder clients(*config, options.use_service_account_credentials,
                        /*share_clients=*/options.sharding == "namespace");
  auto main_client = clients.ClientFor("kube-controller-manager");
  auto events_client = clients.ClientFor("event-broadcaster", std::chrono::seconds(10));
  auto election_client =
      clients.ClientFor("leader-election", std::chrono::duration_cast<std::chrono::milliseconds>(
                                               options.leader_election.renew_deadline));
  if (!main_client.ok() || !events_client.ok() || !election_client.ok()) {
    const Error& e = !main_client.ok()     ? main_client.error()
                     : !events_client.ok() ? events_client.error()
                                           : election_client.error();
    KLOG_ERRORS(e.ToString(), "cannot build a client", "host", config->host);
    return 1;
  }

  record::EventBroadcaster broadcaster;
  auto events_sink = std::make_shared<record::ClientEventSink>(*events_client);
  broadcaster.StartRecordingToSink(events_sink);

  // The mode is built before serving so /healthz can report a stuck elector.
  const RunContext ctx{options, clients, broadcaster, events_sink, *election_client};
  auto mode = NewRunMode(ctx);
  if (!mode.ok()) {
    KLOG_ERRORS(mode.error().ToString(), "cannot start");
    return 1;
  }
  auto server = NewSecureServer(options, *config);
  if (!server.ok()) {
    KLOG_ERRORS(server.error().message, "cannot serve");
    return 1;
  }
  (*mode)->AddChecks(**server);
  InstallOperatorEndpoints(**server, options, build, flag_values);
  if (options.secure_port != 0) {
    Status s = (*server)->Start();
    if (!s.ok()) {
      KLOG_ERRORS(s.error().message, "cannot serve", "bindAddress", options.bind_address,
                  "securePort", options.secure_port);
      return 1;
    }
    KLOG_INFOS("Serving securely", "address",
               options.bind_address + ":" + std::to_string((*server)->Port()));
  }

  Status result = OkStatus();
  if (WaitForAPIServer(**main_client, config->host, stop)) result = (*mode)->Run(stop);
  (*server)->Stop();
  broadcaster.Shutdown();
  if (!result.ok()) {
    // "leaderelection lost" was logged when it happened, as upstream's.
    if (result.error().reason != "LeaseLost")
      KLOG_ERRORS(result.error().ToString(), "Error running controllers");
    return 1;
  }
  KLOG_INFOS("Stopped");
  return 0;
}

}  // namespace kcm::app
