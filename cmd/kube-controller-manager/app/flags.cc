#include "cmd/kube-controller-manager/app/flags.h"

#include <gflags/gflags.h>

#include <sstream>
#include <string>
#include <vector>

#include "pkg/util/duration.h"

// gflags keeps flags in globals; they are read exactly once, in ParseFlags, into Options.
DEFINE_string(kubeconfig, "", "Path to a kubeconfig file. Neither this nor --master: in-cluster.");
DEFINE_string(master, "", "The address of the Kubernetes API server (overrides the kubeconfig).");
DEFINE_string(controllers, "*",
              "Controllers to enable: '*' = all on by default, 'foo' on, '-foo' off. "
              "Known: deployment, replicaset.");
DEFINE_int32(concurrent_deployment_syncs, 5, "Deployment objects synced concurrently.");
DEFINE_int32(concurrent_replicaset_syncs, 5, "ReplicaSet objects synced concurrently.");
DEFINE_string(min_resync_period, "12h0m0s",
              "Informer resync period is random between this and twice this.");
DEFINE_string(controller_cache_sync_timeout, "0s",
              "How long a controller waits for its caches before the process fails (0 = until "
              "stopped, as upstream).");
DEFINE_double(kube_api_qps, 20, "QPS to the API server, per controller client (negative: off).");
DEFINE_int32(kube_api_burst, 30, "Burst to the API server, per controller client.");
DEFINE_string(kube_api_content_type, "application/vnd.kubernetes.protobuf",
              "Accepted for compatibility; this implementation always speaks JSON.");
DEFINE_bool(leader_elect, true, "Elect a leader (Lease) before running the controllers.");
DEFINE_string(leader_elect_lease_duration, "15s", "Lease duration for non-leader candidates.");
DEFINE_string(leader_elect_renew_deadline, "10s", "Leader gives up if not renewed by then.");
DEFINE_string(leader_elect_retry_period, "2s", "Wait between acquire/renew attempts.");
DEFINE_string(leader_elect_resource_lock, "leases", "Lock resource type (only 'leases').");
DEFINE_string(leader_elect_resource_name, "kube-controller-manager", "Lease name.");
DEFINE_string(leader_elect_resource_namespace, "kube-system", "Lease namespace.");
DEFINE_string(bind_address, "0.0.0.0", "Address to serve /metrics and health on.");
DEFINE_int32(secure_port, 10257, "HTTPS port for /metrics and health (0 = off).");
DEFINE_string(tls_cert_file, "", "Serving certificate; self-signed in memory when empty.");
DEFINE_string(tls_private_key_file, "", "Serving key, with --tls-cert-file.");
DEFINE_string(tls_min_version, "VersionTLS12",
              "Minimum TLS version served: VersionTLS12 or VersionTLS13.");
DEFINE_string(tls_cipher_suites, "",
              "Comma-separated TLS 1.2 cipher suites (IANA names). Default: ECDHE with AES-GCM or "
              "ChaCha20-Poly1305 only. TLS 1.3 suites are accepted and not configurable.");
DEFINE_string(client_ca_file, "",
              "Authenticate requests presenting a client certificate signed by one of these CAs "
              "as the certificate's CommonName (groups: its Organizations).");
DEFINE_string(requestheader_client_ca_file, "",
              "CA bundle verifying the front proxy's client certificate before the user in "
              "--requestheader-username-headers is trusted.");
DEFINE_string(requestheader_allowed_names, "",
              "Client certificate CommonNames allowed to assert users in headers (empty: any "
              "certificate verified by --requestheader-client-ca-file).");
DEFINE_string(requestheader_username_headers, "X-Remote-User",
              "Request headers holding the user name (first non-empty wins).");
DEFINE_string(requestheader_group_headers, "X-Remote-Group", "Request headers holding groups.");
DEFINE_string(requestheader_extra_headers_prefix, "X-Remote-Extra-",
              "Request header prefixes holding extra user attributes.");
DEFINE_string(authentication_kubeconfig, "", "Kubeconfig for TokenReview (default: in-cluster).");
DEFINE_string(authorization_kubeconfig, "",
              "Kubeconfig for SubjectAccessReview (default: in-cluster).");
DEFINE_string(feature_gates, "",
              "key=value pairs for alpha/beta features, e.g. "
              "StaleControllerConsistencyReplicaSet=false. Unknown names are an error.");
DEFINE_string(authorization_always_allow_paths, "/healthz,/readyz,/livez",
              "Paths served without authorization.");

namespace kcm::app {
namespace {

// "--kube-api-qps=1" -> "--kube_api_qps=1": gflags names cannot hold dashes.
std::string NormalizeFlag(const std::string& arg) {
  if (arg.size() < 3 || arg[0] != '-') return arg;
  size_t name_start = arg[1] == '-' ? 2 : 1;
  size_t name_end = arg.find('=');
  if (name_end == std::string::npos) name_end = arg.size();
  std::string out = arg;
  for (size_t i = name_start; i < name_end; ++i) {
    if (out[i] == '-') out[i] = '_';
  }
  return out;
}

Result<std::chrono::nanoseconds> DurationFlag(const char* flag, const std::string& value) {
  auto d = ParseDuration(value);
  if (!d.ok())
    return Error::Local("InvalidFlag", std::string("--") + flag + ": " + d.error().message);
  return d;
}

}  // namespace

Result<Options> ParseFlags(int argc, char** argv) {
  std::vector<std::string> normalized;
  normalized.reserve(static_cast<size_t>(argc));
  bool after_terminator = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") after_terminator = true;
    normalized.push_back(i == 0 || after_terminator ? arg : NormalizeFlag(arg));
  }
  std::vector<char*> args;
  for (auto& s : normalized) args.push_back(s.data());
  args.push_back(nullptr);
  int n = argc;
  char** p = args.data();
  gflags::SetUsageMessage(
      "kube-controller-manager [flags]: runs the deployment and replicaset "
      "controllers.");
  gflags::ParseCommandLineFlags(&n, &p, /*remove_flags=*/true);
  if (n > 1) {
    return Error::Local("InvalidFlag", std::string("unexpected argument \"") + p[1] + "\"");
  }

  Options o;
  o.kubeconfig = FLAGS_kubeconfig;
  o.master = FLAGS_master;
  o.controllers = SplitList(FLAGS_controllers);
  o.concurrent_deployment_syncs = FLAGS_concurrent_deployment_syncs;
  o.concurrent_replicaset_syncs = FLAGS_concurrent_replicaset_syncs;
  auto resync = DurationFlag("min-resync-period", FLAGS_min_resync_period);
  if (!resync.ok()) return resync.error();
  o.min_resync_period = *resync;
  auto sync_timeout =
      DurationFlag("controller-cache-sync-timeout", FLAGS_controller_cache_sync_timeout);
  if (!sync_timeout.ok()) return sync_timeout.error();
  o.controller_cache_sync_timeout = *sync_timeout;
  o.kube_api_qps = FLAGS_kube_api_qps;
  o.kube_api_burst = FLAGS_kube_api_burst;
  o.kube_api_content_type = FLAGS_kube_api_content_type;
  auto& le = o.leader_election;
  le.leader_elect = FLAGS_leader_elect;
  struct DurationFlagRef {
    const char* flag;
    const std::string* value;
    std::chrono::nanoseconds* out;
  };
  for (const DurationFlagRef& ref :
       {DurationFlagRef{"leader-elect-lease-duration", &FLAGS_leader_elect_lease_duration,
                        &le.lease_duration},
        DurationFlagRef{"leader-elect-renew-deadline", &FLAGS_leader_elect_renew_deadline,
                        &le.renew_deadline},
        DurationFlagRef{"leader-elect-retry-period", &FLAGS_leader_elect_retry_period,
                        &le.retry_period}}) {
    auto d = DurationFlag(ref.flag, *ref.value);
    if (!d.ok()) return d.error();
    *ref.out = *d;
  }
  le.resource_lock = FLAGS_leader_elect_resource_lock;
  le.resource_name = FLAGS_leader_elect_resource_name;
  le.resource_namespace = FLAGS_leader_elect_resource_namespace;
  o.bind_address = FLAGS_bind_address;
  o.secure_port = FLAGS_secure_port;
  o.tls_cert_file = FLAGS_tls_cert_file;
  o.tls_private_key_file = FLAGS_tls_private_key_file;
  o.tls_min_version = FLAGS_tls_min_version;
  o.tls_cipher_suites = SplitList(FLAGS_tls_cipher_suites);
  o.client_ca_file = FLAGS_client_ca_file;
  o.requestheader_client_ca_file = FLAGS_requestheader_client_ca_file;
  o.requestheader_allowed_names = SplitList(FLAGS_requestheader_allowed_names);
  o.requestheader_username_headers = SplitList(FLAGS_requestheader_username_headers);
  o.requestheader_group_headers = SplitList(FLAGS_requestheader_group_headers);
  o.requestheader_extra_headers_prefix = SplitList(FLAGS_requestheader_extra_headers_prefix);
  o.authentication_kubeconfig = FLAGS_authentication_kubeconfig;
  o.authorization_kubeconfig = FLAGS_authorization_kubeconfig;
  o.authorization_always_allow_paths = SplitList(FLAGS_authorization_always_allow_paths);
  if (Status s = o.feature_gates.Set(FLAGS_feature_gates); !s.ok()) {
    return Error::Local("InvalidFlag", "--feature-gates: " + s.error().message);
  }
  int32_t v = 0;
  if (auto flag = gflags::GetCommandLineFlagInfoOrDie("v"); !flag.current_value.empty()) {
    v = std::stoi(flag.current_value);
  }
  o.verbosity = v;
  return o;
}

std::string EffectiveFlags(const Options& o) {
  std::ostringstream out;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& item : v) s += (s.empty() ? "" : ",") + item;
    return s;
  };
  const auto& le = o.leader_election;
  out << "--kubeconfig=" << o.kubeconfig << " --master=" << o.master
      << " --controllers=" << join(o.controllers)
      << " --concurrent-deployment-syncs=" << o.concurrent_deployment_syncs
      << " --concurrent-replicaset-syncs=" << o.concurrent_replicaset_syncs
      << " --min-resync-period=" << FormatDuration(o.min_resync_period)
      << " --controller-cache-sync-timeout=" << FormatDuration(o.controller_cache_sync_timeout)
      << " --kube-api-qps=" << o.kube_api_qps << " --kube-api-burst=" << o.kube_api_burst
      << " --kube-api-content-type=" << o.kube_api_content_type
      << " --leader-elect=" << (le.leader_elect ? "true" : "false")
      << " --leader-elect-lease-duration=" << FormatDuration(le.lease_duration)
      << " --leader-elect-renew-deadline=" << FormatDuration(le.renew_deadline)
      << " --leader-elect-retry-period=" << FormatDuration(le.retry_period)
      << " --leader-elect-resource-name=" << le.resource_name
      << " --leader-elect-resource-namespace=" << le.resource_namespace
      << " --bind-address=" << o.bind_address << " --secure-port=" << o.secure_port
      << " --tls-cert-file=" << o.tls_cert_file << " --tls-min-version=" << o.tls_min_version
      << " --tls-cipher-suites=" << join(o.tls_cipher_suites)
      << " --client-ca-file=" << o.client_ca_file
      << " --requestheader-client-ca-file=" << o.requestheader_client_ca_file
      << " --requestheader-allowed-names=" << join(o.requestheader_allowed_names)
      << " --requestheader-username-headers=" << join(o.requestheader_username_headers)
      << " --requestheader-group-headers=" << join(o.requestheader_group_headers)
      << " --requestheader-extra-headers-prefix=" << join(o.requestheader_extra_headers_prefix)
      << " --feature-gates=" << o.feature_gates.String() << " --v=" << o.verbosity;
  return out.str();
}

}  // namespace kcm::app
