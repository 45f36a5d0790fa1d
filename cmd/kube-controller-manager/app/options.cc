#include "cmd/kube-controller-manager/app/options.h"

#include <algorithm>
#include <fstream>

#include "cmd/kube-controller-manager/app/upstream_flags.h"
#include "pkg/server/always_allow_paths.h"
#include "pkg/server/tls_options.h"
#include "pkg/util/strings.h"

namespace kcm::app {
namespace {

Error FlagError(const std::string& flag, const std::string& message) {
  return Error::Local("InvalidFlag", "--" + flag + ": " + message);
}

// Maps an accepted spelling of a controller we run to its canonical name, or "" if it is not
// one of ours. Upstream names its controllers "<name>-controller" and keeps the short names as
// aliases.
std::string Canonical(std::string name) {
  const std::string suffix = "-controller";
  if (name.size() > suffix.size() && name.ends_with(suffix)) {
    name.resize(name.size() - suffix.size());
  }
  const auto& known = KnownControllers();
  return std::find(known.begin(), known.end(), name) != known.end() ? name : "";
}

// Whether upstream kube-controller-manager knows the name: a controller's name or old alias.
bool IsUpstreamController(const std::string& name) {
  const auto& all = UpstreamControllerNames();
  return std::find(all.begin(), all.end(), name) != all.end();
}

}  // namespace

const std::vector<std::string>& KnownControllers() {
  static const std::vector<std::string> known = {"deployment", "replicaset"};
  return known;
}

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    std::string item(Trim(std::string_view(value).substr(start, end - start)));
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

// As upstream's IsControllerEnabled: an explicit "name" or "-name" decides (first one wins), and
// only without one does "*" turn on the controllers that are on by default (both of ours are), so
// "*,-deployment" disables deployment.
bool IsControllerEnabled(const std::string& name, const std::vector<std::string>& controllers) {
  bool star = false;
  for (const std::string& entry : controllers) {
    if (entry == "*") {
      star = true;
      continue;
    }
    bool off = !entry.empty() && entry[0] == '-';
    if (Canonical(off ? entry.substr(1) : entry) == name) return !off;
  }
  return star;
}

std::vector<std::string> NotRunControllers(const std::vector<std::string>& controllers) {
  std::vector<std::string> out;
  for (const std::string& entry : controllers) {
    if (entry == "*" || entry.empty() || entry[0] == '-') continue;
    if (Canonical(entry).empty()) out.push_back(entry);
  }
  return out;
}

Status Validate(const Options& o) {
  for (const std::string& entry : o.controllers) {
    if (entry == "*") continue;
    std::string bare = entry[0] == '-' ? entry.substr(1) : entry;
    if (Canonical(bare).empty() && !IsUpstreamController(bare)) {
      return FlagError("controllers", "\"" + bare + "\" is not in the list of known controllers");
    }
  }
  if (o.logging_format != "text" && o.logging_format != "json") {
    return FlagError("logging-format",
                     "format \"" + o.logging_format + "\" not supported (supported: text, json)");
  }
  if (o.log_flush_frequency <= std::chrono::nanoseconds(0)) {
    return FlagError("log-flush-frequency", "must be positive");
  }
  if (o.concurrent_deployment_syncs < 1) {
    return FlagError("concurrent-deployment-syncs",
                     "must be at least 1, got " + std::to_string(o.concurrent_deployment_syncs));
  }
  if (o.concurrent_replicaset_syncs < 1) {
    return FlagError("concurrent-replicaset-syncs",
                     "must be at least 1, got " + std::to_string(o.concurrent_replicaset_syncs));
  }
  if (o.min_resync_period <= std::chrono::nanoseconds(0)) {
    return FlagError("min-resync-period", "must be positive");
  }
  if (o.controller_cache_sync_timeout < std::chrono::nanoseconds(0)) {
    return FlagError("controller-cache-sync-timeout", "must not be negative (0 = no timeout)");
  }
  // Negative QPS means "no client-side limit", as in client-go; zero would block every request.
  if (o.kube_api_qps == 0) return FlagError("kube-api-qps", "must not be 0 (negative = no limit)");
  if (o.kube_api_burst < 1 && o.kube_api_qps > 0) {
    return FlagError("kube-api-burst", "must be positive, got " + std::to_string(o.kube_api_burst));
  }
  if (o.kube_api_content_type != "application/json" &&
      o.kube_api_content_type != "application/vnd.kubernetes.protobuf") {
    return FlagError("kube-api-content-type",
                     "must be application/json or application/vnd.kubernetes.protobuf");
  }
  const auto& le = o.leader_election;
  if (le.leader_elect) {
    if (le.resource_lock != "leases") {
      return FlagError("leader-elect-resource-lock", "only \"leases\" is supported");
    }
    if (le.retry_period <= std::chrono::nanoseconds(0)) {
      return FlagError("leader-elect-retry-period", "must be positive");
    }
    // Same rules as client-go's leader elector: lease > renew > 1.2 x retry.
    if (le.lease_duration <= le.renew_deadline) {
      return FlagError("leader-elect-lease-duration",
                       "must be greater than --leader-elect-renew-deadline");
    }
    if (le.renew_deadline.count() <= 1.2 * le.retry_period.count()) {
      return FlagError("leader-elect-renew-deadline",
                       "must be greater than 1.2 x --leader-elect-retry-period");
    }
    if (le.resource_name.empty()) return FlagError("leader-elect-resource-name", "is empty");
    if (le.resource_namespace.empty()) {
      return FlagError("leader-elect-resource-namespace", "is empty");
    }
  }
  if (o.sharding != "none" && o.sharding != "namespace") {
    return FlagError("sharding", "must be none or namespace, got \"" + o.sharding + "\"");
  }
  if (o.sharding == "namespace" && !le.leader_elect) {
    return FlagError("sharding", "namespace sharding needs --leader-elect=true");
  }
  if (o.secure_port < 0 || o.secure_port > 65535) {
    return FlagError("secure-port",
                     "must be 0 (off) or a port 1-65535, got " + std::to_string(o.secure_port));
  }
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty()) {
    return FlagError("tls-cert-file", "--tls-cert-file and --tls-private-key-file go together");
  }
  if (auto v = server::TLSVersionFromName(o.tls_min_version); !v.ok()) {
    return FlagError("tls-min-version", v.error().message);
  }
  if (auto c = server::OpenSSLCipherList(o.tls_cipher_suites); !c.ok()) {
    return FlagError("tls-cipher-suites", c.error().message);
  }
  // Upstream builds its path authorizer only when it serves (options.Config: secure port not 0),
  // so a malformed entry is an error then only.
  if (o.secure_port != 0) {
    if (auto p = server::AlwaysAllowPaths::Parse(o.authorization_always_allow_paths); !p.ok()) {
      return FlagError("authorization-always-allow-paths", p.error().message);
    }
  }
  for (const auto& [flag, file] :
       {std::pair<const char*, const std::string&>{"client-ca-file", o.client_ca_file},
        {"requestheader-client-ca-file", o.requestheader_client_ca_file}}) {
    if (!file.empty() && !std::ifstream(file).good()) {
      return FlagError(flag, "cannot read " + file);
    }
  }
  if (o.verbosity < 0) return FlagError("v", "must not be negative");
  return OkStatus();
}

}  // namespace kcm::app
