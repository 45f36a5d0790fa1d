// Options: the daemon's configuration, with upstream kube-controller-manager flag names and
// defaults (upstream kube-controller-manager's). A setting a library also has takes its default
// from that library's options (one default per value; the flag table prints it from here). Built
// once at start from the command line, validated, then read-only. Thread-compatible.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cmd/kube-controller-manager/app/features.h"
#include "controllers/deployment/config.h"
#include "controllers/replicaset/config.h"
#include "pkg/leaderelection/leader_elector.h"
#include "pkg/server/secure_server.h"
#include "pkg/util/result.h"

namespace kcm::app {

struct LeaderElectionOptions {
  bool leader_elect = true;
  std::chrono::nanoseconds lease_duration = leaderelection::LeaderElectionConfig{}.lease_duration;
  std::chrono::nanoseconds renew_deadline = leaderelection::LeaderElectionConfig{}.renew_deadline;
  std::chrono::nanoseconds retry_period = leaderelection::LeaderElectionConfig{}.retry_period;
  std::string resource_lock = "leases";
  std::string resource_name = "kube-controller-manager";
  std::string resource_namespace = "kube-system";
};

struct Options {
  std::string kubeconfig;
  std::string master;
  std::vector<std::string> controllers = {"*"};
  int concurrent_deployment_syncs = deployment::kDefaultConcurrentDeploymentSyncs;
  int concurrent_replicaset_syncs = replicaset::kDefaultConcurrentReplicaSetSyncs;
  std::chrono::nanoseconds min_resync_period = std::chrono::hours(12);
  // Not an upstream flag: how long a controller waits for its informers' caches before it fails
  // (and the process exits 1). Zero (default) = wait until stopped, as upstream's controllers do
  // with WaitForNamedCacheSync; /readyz stays false meanwhile.
  std::chrono::nanoseconds controller_cache_sync_timeout{0};
  // "none": one leader runs everything; "namespace": replicas divide the namespaces among
  // themselves (pkg/sharding, docs/operating.md). Ours, not upstream's.
  std::string sharding = "none";
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  std::string kube_api_content_type = "application/vnd.kubernetes.protobuf";
  LeaderElectionOptions leader_election;
  std::string bind_address = server::ServingOptions{}.bind_address;
  int secure_port = server::ServingOptions{}.port;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string tls_min_version = server::ServingOptions{}.tls_min_version;
  std::vector<std::string> tls_cipher_suites;  // IANA names; empty = ECDHE + AEAD suites only
  std::string client_ca_file;
  std::string requestheader_client_ca_file;
  std::vector<std::string> requestheader_allowed_names;
  std::vector<std::string> requestheader_username_headers =
      server::RequestHeaderOptions{}.username_headers;
  std::vector<std::string> requestheader_group_headers =
      server::RequestHeaderOptions{}.group_headers;
  std::vector<std::string> requestheader_extra_headers_prefix =
      server::RequestHeaderOptions{}.extra_headers_prefix;
  std::string authentication_kubeconfig;
  std::string authorization_kubeconfig;
  std::vector<std::string> authorization_always_allow_paths =
      server::ServingOptions{}.always_allow_paths;
  bool use_service_account_credentials = false;
  // --profiling: upstream serves /debug/pprof and /debug/flags/v with it; this binary serves
  // /debug/flags/v (it has no Go profiler).
  bool enable_profiling = true;
  std::string logging_format = "text";  // "text" | "json"
  std::chrono::nanoseconds log_flush_frequency = std::chrono::seconds(5);
  int verbosity = 0;
  // --feature-gates: every upstream gate name is accepted; unknown names are an error.
  features::FeatureGate feature_gates;
};

// Every error names the flag it is about, e.g. "--kube-api-burst: must be positive, got 0".
Status Validate(const Options& options);

// The controllers this binary runs, with their aliases (see IsControllerEnabled).
const std::vector<std::string>& KnownControllers();  // {"deployment", "replicaset"}

// The controllers the --controllers list names that upstream has and this binary does not run,
// e.g. "bootstrapsigner" for kubeadm's "*,bootstrapsigner,tokencleaner": reported at start.
std::vector<std::string> NotRunControllers(const std::vector<std::string>& controllers);

// Whether `name` (a canonical controller name) is on under the --controllers list: the list is
// scanned in order and the first match wins: "name" on, "-name" off, "*" = every controller that
// is on by default (both of ours are). Aliases "<name>-controller" are accepted.
bool IsControllerEnabled(const std::string& name, const std::vector<std::string>& controllers);

// Splits a comma-separated flag value, dropping empty entries and surrounding spaces.
std::vector<std::string> SplitList(const std::string& value);

}  // namespace kcm::app
