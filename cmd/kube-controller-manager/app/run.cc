#include "cmd/kube-controller-manager/app/run.h"

#include <glog/logging.h>

#include <atomic>
#include <optional>

#include "cmd/kube-controller-manager/app/component_metrics.h"
#include "cmd/kube-controller-manager/app/controller_context.h"
#include "cmd/kube-controller-manager/app/flags.h"
#include "cmd/kube-controller-manager/app/operator_endpoints.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/client/user_agent.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/leaderelection/identity.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/leaderelection/lease_lock.h"
#include "pkg/metrics/metrics.h"
#include "pkg/record/client_event_sink.h"
#include "pkg/record/event_broadcaster.h"
#include "pkg/server/delegating_authorizer.h"
#include "pkg/server/secure_server.h"
#include "pkg/sharding/served_work.h"
#include "pkg/sharding/shard_manager.h"
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
      if (attempt > 1) LOG(INFO) << "API server " << host << " is reachable";
      return true;
    }
    if (stop.stop_requested()) return false;
    LOG(ERROR) << "waiting for the API server at " << host << " (attempt " << attempt
               << "): " << r.error().ToString() << "; retrying in " << delay.count() << "s";
    if (!RealClock::Get().SleepFor(delay, stop)) return false;
    delay = std::min(delay * 2, std::chrono::seconds(30));
  }
}

// Builds the controllers, starts the informers and runs until stop (the leader's work). An
// error when a controller cannot be built or fails while running (upstream's StartControllers
// error: the process exits 1).
// With `shard` (--sharding=namespace; null = every namespace), the informers list and watch only
// the namespaces it selects, and `stop` is that shard's serving token.
Status RunControllers(const Options& options, const ClientBuilder& clients,
                      record::EventBroadcaster& broadcaster,
                      std::shared_ptr<record::EventSink> events_sink, ControllerReadiness& ready,
                      std::stop_token stop, const api::ShardSelector* shard = nullptr,
                      informers::ShardFilterObserver shard_observer = {},
                      sharding::ServedWork* served_work = nullptr) {
  auto informer_client = clients.ClientFor("shared-informers");
  if (!informer_client.ok()) return informer_client.error();
  informers::SharedInformerFactoryOptions fo;
  if (shard != nullptr) fo.shard_selector = *shard;
  fo.shard_filter_observer = std::move(shard_observer);
  informers::SharedInformerFactory factory(*informer_client,
                                           ResyncPeriod(options.min_resync_period), fo);
  // `stop` is the leader's "leading" token: the controllers' writers are fenced with it.
  ControllerContext ctx{
      options, clients, factory, broadcaster, RealClock::Get(), stop, std::move(events_sink)};

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
          VLOG(1) << "informer " << resource << (synced ? " synced" : " not synced");
        }
        ready.informers_synced = all_synced && !running.stop_requested();
        if (ready.informers_synced) LOG(INFO) << "Caches are synced";
      },
      ready, stop);
  LOG(INFO) << "Controllers stopped";
  counted.reset();
  factory.Shutdown();
  ready.informers_synced = false;
  ready.enabled = 0;
  return s;
}

// --sharding=namespace: the replica's ShardManager, serving each share it gains with its own
// informers (filtered to the share) and controllers.
Result<std::unique_ptr<sharding::ShardManager>> NewShardManager(
    const Options& options, const ClientBuilder& clients, record::EventBroadcaster& broadcaster,
    std::shared_ptr<record::EventSink> events_sink,
    std::shared_ptr<client::RestClient> election_client) {
  const auto& le = options.leader_election;
  auto identity = leaderelection::NewIdentity();
  if (!identity.ok()) return identity.error();
  auto informer_client = clients.ClientFor("sharding");
  if (!informer_client.ok()) return informer_client.error();
  LOG(INFO) << "Sharding by namespace as " << *identity << " (leases " << le.resource_namespace
            << "/" << le.resource_name << "*)";
  sharding::ShardManagerConfig sc;
  sc.client = std::move(election_client);
  sc.informer_client = std::move(*informer_client);
  sc.lease_namespace = le.resource_namespace;
  sc.name = le.resource_name;
  sc.identity = *identity;
  sc.lease_duration = std::chrono::duration_cast<Clock::duration>(le.lease_duration);
  sc.renew_deadline = std::chrono::duration_cast<Clock::duration>(le.renew_deadline);
  sc.retry_period = std::chrono::duration_cast<Clock::duration>(le.retry_period);
  sc.recorder = broadcaster.NewRecorder({"kube-controller-manager", ""});
  // Whether the server filters by shardSelector, logged once per process and exported.
  auto told = std::make_shared<std::atomic<int>>(-1);
  const metrics::Gauge server_side =
      metrics::GaugeVec("controller_sharding_server_side_filtering",
                        "1 when the API server filtered this replica's lists and watches by its "
                        "shard selector, 0 when it ignored the selector and this replica "
                        "filtered on its own side.",
                        {})
          .With({});
  informers::ShardFilterObserver observer = [told, server_side](bool server_filters) {
    server_side.Set(server_filters ? 1 : 0);
    const int now = server_filters ? 1 : 0;
    if (told->exchange(now) == now) return;
    if (server_filters) {
      LOG(INFO) << "the API server filters lists and watches by shardSelector";
    } else {
      LOG(WARNING) << "the API server ignores shardSelector (older than v1.36 or its "
                      "ShardedListAndWatch feature gate is off): every replica receives every "
                      "object and keeps only its share";
    }
  };
  sc.served_work = std::make_shared<sharding::ServedWork>();
  sc.serve = [&options, &clients, &broadcaster, events_sink, observer,
              served_work = sc.served_work](const api::ShardSelector& shard, std::stop_token stop) {
    ControllerReadiness ready;  // the ShardManager reports readiness
    return RunControllers(options, clients, broadcaster, events_sink, ready, stop, &shard, observer,
                          served_work.get());
  };
  return sharding::ShardManager::Create(std::move(sc));
}

}  // namespace

int Run(const Options& options, const BuildInfo& build,
        const std::map<std::string, std::string>& flag_values, std::stop_token stop) {
  LOG(INFO) << "Version: " << build.version << (build.commit.empty() ? "" : " commit ")
            << build.commit;
  LOG(INFO) << "Flags: " << EffectiveFlags(options);
  RegisterBuildInfo(build);
  RecordFeatureInfo(options.feature_gates);

  auto config = client::BuildConfigFromFlags(options.master, options.kubeconfig);
  if (!config.ok()) {
    LOG(ERROR) << "invalid client configuration: " << config.error().ToString();
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
    LOG(ERROR) << "cannot build a client for " << config->host << ": " << e.ToString();
    return 1;
  }

  record::EventBroadcaster broadcaster;
  auto events_sink = std::make_shared<record::ClientEventSink>(*events_client);
  broadcaster.StartRecordingToSink(events_sink);

  // Leader election is set up before serving so /healthz can report a stuck elector.
  std::stop_source shutdown;
  std::stop_callback forward(stop, [&] { shutdown.request_stop(); });
  std::atomic<bool> lost_lease{false}, failed{false};
  ControllerReadiness ready;
  auto run_controllers = [&](std::stop_token leading) {
    Status s = RunControllers(options, clients, broadcaster, events_sink, ready, leading);
    if (!s.ok()) {
      LOG(ERROR) << s.error().ToString();
      failed = true;
      shutdown.request_stop();
    }
  };
  std::unique_ptr<leaderelection::LeaderElector> elector;
  std::unique_ptr<sharding::ShardManager> shards;
  const auto& le = options.leader_election;
  if (le.leader_elect && options.sharding == "namespace") {
    auto s = NewShardManager(options, clients, broadcaster, events_sink, *election_client);
    if (!s.ok()) {
      LOG(ERROR) << s.error().ToString();
      return 1;
    }
    shards = std::move(*s);
  } else if (le.leader_elect) {
    auto identity = leaderelection::NewIdentity();
    if (!identity.ok()) {
      LOG(ERROR) << "cannot build a leader election identity: " << identity.error().ToString();
      return 1;
    }
    LOG(INFO) << "Leader election identity: " << *identity << " lease " << le.resource_namespace
              << "/" << le.resource_name;
    leaderelection::LeaderElectionConfig lc;
    lc.lock = std::make_shared<leaderelection::LeaseLock>(
        *election_client, le.resource_namespace, le.resource_name, *identity,
        broadcaster.NewRecorder({"kube-controller-manager", ""}));
    lc.lease_duration = std::chrono::duration_cast<Clock::duration>(le.lease_duration);
    lc.renew_deadline = std::chrono::duration_cast<Clock::duration>(le.renew_deadline);
    lc.retry_period = std::chrono::duration_cast<Clock::duration>(le.retry_period);
    lc.release_on_cancel = true;
    lc.name = le.resource_name;
    lc.callbacks.on_started_leading = run_controllers;
    lc.callbacks.on_stopped_leading = [&] {
      if (!shutdown.stop_requested()) {
        LOG(ERROR) << "leaderelection lost";
        lost_lease = true;
      }
    };
    lc.callbacks.on_new_leader = [id = *identity](const std::string& leader) {
      if (leader != id) LOG(INFO) << "New leader elected: " << leader;
    };
    auto e = leaderelection::LeaderElector::Create(std::move(lc));
    if (!e.ok()) {
      LOG(ERROR) << "invalid leader election configuration: " << e.error().ToString();
      return 1;
    }
    elector = std::move(*e);
  }

  server::ServingOptions so;
  so.bind_address = options.bind_address;
  so.port = options.secure_port;
  so.tls_cert_file = options.tls_cert_file;
  so.tls_private_key_file = options.tls_private_key_file;
  so.tls_min_version = options.tls_min_version;
  so.tls_cipher_suites = options.tls_cipher_suites;
  so.always_allow_paths = options.authorization_always_allow_paths;
  so.client_ca_file = options.client_ca_file;
  so.request_header = {options.requestheader_client_ca_file, options.requestheader_allowed_names,
                       options.requestheader_username_headers, options.requestheader_group_headers,
                       options.requestheader_extra_headers_prefix};
  server::SecureServer server(so);
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  if (elector) {
    server.AddHealthCheck(
        {"leaderElection", [&] { return elector->Check(std::chrono::seconds(20)); }});
    server.AddReadyCheck({"leader", [&]() -> Status {
                            if (elector->IsLeader()) return OkStatus();
                            return Error::Local("NotLeader",
                                                "not leading; leader is " + elector->GetLeader());
                          }});
  }
  if (shards) {
    // The member Lease fences this replica's writes as the leader's Lease does otherwise.
    server.AddHealthCheck({"leaderElection", [&] { return shards->Healthy(); }});
    server.AddReadyCheck({"shards", [&] { return shards->Ready(); }});
  } else {
    server.AddReadyCheck({"informer-sync", [&] { return ready.InformersSynced(); }});
    server.AddReadyCheck({"controllers", [&] { return ready.ControllersRunning(); }});
  }
  // Delegated authn/authz: their own kubeconfigs when given, else the controller manager's
  // connection (in a cluster: in-cluster config) — but always a client of their own, so the
  // reviews neither wait behind nor eat the controllers' rate limit. As upstream's
  // DelegatingAuthenticationOptions.getClient: QPS 200, burst 400, a 10 s timeout.
  auto delegated_client = [&](const std::string& kubeconfig,
                              const char* flag) -> Result<std::shared_ptr<client::RestClient>> {
    client::RestConfig c = *config;
    if (!kubeconfig.empty()) {
      auto loaded = client::BuildConfigFromFlags("", kubeconfig);
      if (!loaded.ok()) {
        return Error::Local("InvalidFlag",
                            std::string("--") + flag + ": " + loaded.error().message);
      }
      c = std::move(*loaded);
    }
    c.qps = 200;
    c.burst = 400;
    c.timeout = std::chrono::seconds(10);
    c.user_agent = config->user_agent;
    return client::RestClient::Create(c);
  };
  auto authn = delegated_client(options.authentication_kubeconfig, "authentication-kubeconfig");
  auto authz = delegated_client(options.authorization_kubeconfig, "authorization-kubeconfig");
  if (!authn.ok() || !authz.ok()) {
    LOG(ERROR) << (!authn.ok() ? authn.error() : authz.error()).message;
    return 1;
  }
  server.SetAuthorizer(std::make_shared<server::DelegatingAuthorizer>(*authn, *authz));
  InstallOperatorEndpoints(server, options, build, flag_values);
  if (options.secure_port != 0) {
    Status s = server.Start();
    if (!s.ok()) {
      LOG(ERROR) << "serving on --bind-address=" << options.bind_address
                 << " --secure-port=" << options.secure_port << ": " << s.error().message;
      return 1;
    }
    LOG(INFO) << "Serving securely on " << options.bind_address << ":" << server.Port();
  }

  if (WaitForAPIServer(**main_client, config->host, shutdown.get_token())) {
    if (shards) {
      Status s = shards->Run(shutdown.get_token());
      if (!s.ok()) {
        LOG(ERROR) << s.error().ToString();
        failed = true;
      }
    } else if (elector) {
      elector->Run(shutdown.get_token());
    } else {
      run_controllers(shutdown.get_token());
    }
  }
  server.Stop();
  broadcaster.Shutdown();
  if (lost_lease || failed) return 1;
  LOG(INFO) << "Stopped";
  return 0;
}

}  // namespace kcm::app
