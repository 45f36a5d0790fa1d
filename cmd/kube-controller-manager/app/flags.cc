#include "cmd/kube-controller-manager/app/flags.h"

#include <glog/logging.h>

#include <array>
#include <cctype>
#include <charconv>
#include <sstream>

#include "cmd/kube-controller-manager/app/flag_set.h"
#include "cmd/kube-controller-manager/app/flagz_values.h"
#include "cmd/kube-controller-manager/app/upstream_flags.h"
#include "pkg/util/duration.h"
#include "pkg/util/klog_logger.h"

namespace kcm::app {
namespace {

Error ValueError(const std::string& message) {
  return Error::Local("InvalidFlag", message);
}

bool ParseBoolValue(const std::string& v) {
  return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True";
}

bool IsFalseValue(const std::string& v) {
  return v == "false" || v == "0" || v == "f" || v == "F" || v == "FALSE" || v == "False";
}

// The setters below parse like Go's strconv, whose wording pflag puts in its error
// ("strconv.ParseInt: parsing \"x\": invalid syntax").
template <typename Number>
std::function<Status(const std::string&)> Numeric(Number* out, const char* go_parser) {
  return [out, go_parser](const std::string& v) -> Status {
    Number n{};
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
      return ValueError(std::string(go_parser) + ": parsing \"" + v + "\": invalid syntax");
    }
    *out = n;
    return OkStatus();
  };
}

std::function<Status(const std::string&)> Int(int* out) {
  return Numeric(out, "strconv.ParseInt");
}

std::function<Status(const std::string&)> Float(double* out) {
  return Numeric(out, "strconv.ParseFloat");
}

std::function<Status(const std::string&)> Bool(bool* out) {
  return [out](const std::string& v) -> Status {
    if (!ParseBoolValue(v) && !IsFalseValue(v)) {
      return ValueError("strconv.ParseBool: parsing \"" + v + "\": invalid syntax");
    }
    *out = ParseBoolValue(v);
    return OkStatus();
  };
}

std::function<Status(const std::string&)> String(std::string* out) {
  return [out](const std::string& v) -> Status {
    *out = v;
    return OkStatus();
  };
}

std::function<Status(const std::string&)> Strings(std::vector<std::string>* out) {
  return [out](const std::string& v) -> Status {
    *out = SplitList(v);
    return OkStatus();
  };
}

std::function<Status(const std::string&)> Duration(std::chrono::nanoseconds* out) {
  return [out](const std::string& v) -> Status {
    auto d = ParseDuration(v);
    if (!d.ok()) return ValueError(d.error().message);
    *out = *d;
    return OkStatus();
  };
}

// --vmodule "pattern=N,...": glog's per-file verbosity, through klog::SetVModule (glog's own API,
// and noted so that contextual loggers' V honours it as well as KLOG_V_INFOS).
Status ApplyVmodule(const std::string& v) {
  for (const std::string& item : SplitList(v)) {
    size_t eq = item.find('=');
    int level = 0;
    if (eq == std::string::npos || eq == 0 || !Int(&level)(item.substr(eq + 1)).ok()) {
      return ValueError("expect comma-separated list of pattern=N");
    }
    klog::SetVModule(item.substr(0, eq), level);
  }
  return OkStatus();
}

// The shortest text that parses back to the same double (an ostream's default 6 significant
// digits would log --kube-api-qps=0.1234567 as 0.123457).
std::string FormatFloat(double d) {
  std::array<char, 32> buf;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  return ec == std::errc() ? std::string(buf.data(), end) : std::string();
}

// A flag's "(default ...)" text, from the Options field's own default, as pflag prints it: no
// text for false.
std::string DefaultText(int v) {
  return std::to_string(v);
}

std::string DefaultText(double v) {
  return FormatFloat(v);
}

std::string DefaultText(std::chrono::nanoseconds d) {
  return FormatDuration(d);
}

std::string DefaultText(bool v) {
  return v ? "true" : "";
}

std::string QuotedDefault(const std::string& v) {
  return "\"" + v + "\"";
}

}  // namespace

void DeclareUpstreamSections(FlagSet& set) {
  for (const auto& title : UpstreamSections()) set.Section(title);
}

void DefineUpstreamOnlyFlags(FlagSet& set) {
  for (const UpstreamFlag& u : UpstreamFlags()) {
    if (set.Has(u.name)) continue;
    set.Section(u.section).flags.push_back(
        Flag{u.name, u.shorthand, u.type, u.default_text,
             "Accepted for compatibility; not used by this binary (reported at start when set).",
             nullptr});
  }
}

CommandLine::CommandLine() : flags_(std::make_unique<FlagSet>("kube-controller-manager")) {
  Define();
}

CommandLine::~CommandLine() = default;

const std::vector<std::string>& CommandLine::NotApplicable() const {
  return flags_->NotApplicableSet();
}

void CommandLine::Define() {
  Options& o = options_;
  auto& le = o.leader_election;
  auto add = [this](const std::string& section, Flag flag) {
    flags_->Section(section).flags.push_back(std::move(flag));
  };

  // Upstream's sections in upstream's order; the flags we act on are defined here, the others
  // come from the upstream table (upstream_flags.h) into the same sections.
  DeclareUpstreamSections(*flags_);
  const std::string generic = "Generic flags";
  add(generic, {"controllers", "", "strings", "[*]",
                "Controllers to enable. '*' enables all on-by-default controllers, 'foo' "
                "enables the controller named foo, '-foo' disables it; the first match wins. "
                "This binary runs deployment and replicaset (aliases deployment-controller, "
                "replicaset-controller); upstream's other names are accepted and reported as not "
                "run.",
                Strings(&o.controllers)});
  add(generic, {"feature-gates", "", "colonSeparatedMultimapStringString", "",
                "Comma-separated key=value pairs that turn feature gates on or off. Every "
                "upstream gate name is accepted; the gates this binary acts on are listed in "
                "docs/operating.md.",
                [&o](const std::string& v) -> Status {
                  // FeatureGate::Set keeps the earlier value on error; repeating the flag adds.
                  if (Status s = o.feature_gates.Set(v); !s.ok()) {
                    return ValueError(s.error().message);
                  }
                  return OkStatus();
                }});
  add(generic, {"kube-api-burst", "", "int32", DefaultText(o.kube_api_burst),
                "Burst allowed to each controller's API client.", Int(&o.kube_api_burst)});
  add(generic, {"kube-api-content-type", "", "string", QuotedDefault(o.kube_api_content_type),
                "Content type of requests sent to the API server. LIST and WATCH of pods use "
                "it (protobuf or JSON); other reads and all writes are JSON.",
                String(&o.kube_api_content_type)});
  add(generic, {"kube-api-qps", "", "float32", DefaultText(o.kube_api_qps),
                "Queries per second allowed to each controller's API client (negative: no "
                "client-side limit).",
                Float(&o.kube_api_qps)});
  add(generic, {"leader-elect", "", "", DefaultText(le.leader_elect),
                "Elect a leader through a Lease before running the controllers; for replicated "
                "deployments.",
                Bool(&le.leader_elect)});
  add(generic, {"leader-elect-lease-duration", "", "duration", DefaultText(le.lease_duration),
                "How long a non-leader waits after the last observed renewal before it may take "
                "the lease.",
                Duration(&le.lease_duration)});
  add(generic, {"leader-elect-renew-deadline", "", "duration", DefaultText(le.renew_deadline),
                "How long the leader keeps retrying a renewal before it stops leading; less than "
                "the lease duration.",
                Duration(&le.renew_deadline)});
  add(generic, {"leader-elect-resource-lock", "", "string", QuotedDefault(le.resource_lock),
                "The lock object type; only 'leases' is supported.", String(&le.resource_lock)});
  add(generic, {"leader-elect-resource-name", "", "string", QuotedDefault(le.resource_name),
                "Name of the Lease used for leader election.", String(&le.resource_name)});
  add(generic,
      {"leader-elect-resource-namespace", "", "string", QuotedDefault(le.resource_namespace),
       "Namespace of the Lease used for leader election.", String(&le.resource_namespace)});
  add(generic,
      {"leader-elect-retry-period", "", "duration", DefaultText(le.retry_period),
       "Wait between attempts to acquire or renew the lease.", Duration(&le.retry_period)});
  add(generic, {"min-resync-period", "", "duration", DefaultText(o.min_resync_period),
                "Informers resync at a random period between this and twice this.",
                Duration(&o.min_resync_period)});
  // Ours, not upstream's (upstream's controllers wait for their caches until stopped).
  add(generic, {"controller-cache-sync-timeout", "", "duration",
                DefaultText(o.controller_cache_sync_timeout),
                "How long a controller waits for its informers' caches before the process fails "
                "and exits 1; 0 waits until stopped, as upstream. /readyz is false meanwhile.",
                Duration(&o.controller_cache_sync_timeout)});
  add(generic, {"sharding", "", "string", QuotedDefault(o.sharding),
                "How replicas share the work: 'none' (one elected leader runs every controller) "
                "or 'namespace' (every replica serves a share of the namespaces, divided through "
                "Leases in --leader-elect-resource-namespace; needs --leader-elect). Not an "
                "upstream flag.",
                String(&o.sharding)});
  add(generic,
      {"use-service-account-credentials", "", "", DefaultText(o.use_service_account_credentials),
       "Give each controller its own credentials: a token of the service account "
       "kube-system/<controller>-controller from the TokenRequest API.",
       Bool(&o.use_service_account_credentials)});

  const std::string serving = "Secure serving flags";
  add(serving, {"bind-address", "", "ip", o.bind_address,
                "Address to serve /metrics and the health checks on (0.0.0.0 or :: for all "
                "interfaces).",
                String(&o.bind_address)});
  add(serving,
      {"secure-port", "", "int", DefaultText(o.secure_port),
       "HTTPS port for /metrics and the health checks; 0 turns serving off.", Int(&o.secure_port)});
  add(serving, {"tls-cert-file", "", "string", "",
                "PEM serving certificate (with intermediates after it). Empty: a self-signed "
                "certificate made in memory at start.",
                String(&o.tls_cert_file)});
  add(serving, {"tls-private-key-file", "", "string", "", "PEM private key of --tls-cert-file.",
                String(&o.tls_private_key_file)});
  add(serving, {"tls-min-version", "", "string", "",
                "Minimum TLS version served: VersionTLS12 (default) or VersionTLS13.",
                String(&o.tls_min_version)});
  add(serving, {"tls-cipher-suites", "", "strings", "",
                "TLS 1.2 cipher suites served (IANA names). Default: ECDHE with AES-GCM or "
                "ChaCha20-Poly1305 only. TLS 1.3 suites are not configurable.",
                Strings(&o.tls_cipher_suites)});

  const std::string authn = "Authentication flags";
  add(authn, {"authentication-kubeconfig", "", "string", "",
              "Kubeconfig of the API server that reviews bearer tokens (TokenReview). Empty: the "
              "controller manager's own connection.",
              String(&o.authentication_kubeconfig)});
  add(authn, {"client-ca-file", "", "string", "",
              "Requests with a client certificate signed by one of these CAs are authenticated "
              "as the certificate's CommonName, with its Organizations as groups.",
              String(&o.client_ca_file)});
  add(authn, {"requestheader-allowed-names", "", "strings", "",
              "Client certificate common names allowed to assert users in the request headers. "
              "Empty: any certificate verified by --requestheader-client-ca-file.",
              Strings(&o.requestheader_allowed_names)});
  add(authn, {"requestheader-client-ca-file", "", "string", "",
              "CA bundle that verifies the front proxy's client certificate before the user in "
              "--requestheader-username-headers is trusted.",
              String(&o.requestheader_client_ca_file)});
  add(authn, {"requestheader-extra-headers-prefix", "", "strings", "[x-remote-extra-]",
              "Request header prefixes holding extra user attributes.",
              Strings(&o.requestheader_extra_headers_prefix)});
  add(authn, {"requestheader-group-headers", "", "strings", "[x-remote-group]",
              "Request headers holding the groups.", Strings(&o.requestheader_group_headers)});
  add(authn, {"requestheader-username-headers", "", "strings", "[x-remote-user]",
              "Request headers holding the user name (the first non-empty one wins).",
              Strings(&o.requestheader_username_headers)});

  const std::string authz = "Authorization flags";
  add(authz, {"authorization-always-allow-paths", "", "strings", "[/healthz,/readyz,/livez]",
              "Paths served without authorization.", Strings(&o.authorization_always_allow_paths)});
  add(authz, {"authorization-kubeconfig", "", "string", "",
              "Kubeconfig of the API server that authorizes requests (SubjectAccessReview). "
              "Empty: the controller manager's own connection.",
              String(&o.authorization_kubeconfig)});

  add("Deployment controller flags",
      {"concurrent-deployment-syncs", "", "int32", DefaultText(o.concurrent_deployment_syncs),
       "Deployments synced at once; more is more responsive and more CPU and network.",
       Int(&o.concurrent_deployment_syncs)});
  add("Replicaset controller flags",
      {"concurrent-replicaset-syncs", "", "int32", DefaultText(o.concurrent_replicaset_syncs),
       "ReplicaSets synced at once; more is more responsive and more CPU and network.",
       Int(&o.concurrent_replicaset_syncs)});

  add("Debugging flags",
      {"profiling", "", "", DefaultText(o.enable_profiling),
       "Serve /debug/flags/v, where a PUT of a number sets the log verbosity at run time "
       "(upstream also serves Go's profiler at /debug/pprof, which this binary does not have).",
       Bool(&o.enable_profiling)});

  const std::string misc = "Misc flags";
  add(misc, {"kubeconfig", "", "string", "",
             "Kubeconfig with the API server's address and credentials. Neither this nor "
             "--master: in-cluster configuration.",
             String(&o.kubeconfig)});
  add(misc, {"master", "", "string", "", "Address of the API server; overrides the kubeconfig's.",
             String(&o.master)});

  const std::string logs = "Logs flags";
  add(logs, {"log-flush-frequency", "", "duration", DefaultText(o.log_flush_frequency),
             "Maximum time between log flushes.", Duration(&o.log_flush_frequency)});
  add(logs, {"logging-format", "", "string", QuotedDefault(o.logging_format),
             "Log format: \"text\" (klog's header and key=value pairs) or \"json\" (one JSON "
             "object a line: ts, caller, msg, v and the key/value pairs).",
             String(&o.logging_format)});
  add(logs, {"v", "v", "Level", "", "Log verbosity: higher logs more.",
             [this](const std::string& v) -> Status {
               if (Status s = Int(&options_.verbosity)(v); !s.ok()) return s;
               FLAGS_v = options_.verbosity;  // glog's verbosity, read by VLOG_IS_ON
               return OkStatus();
             }});
  add(logs, {"vmodule", "", "pattern=N,...", "",
             "Per-file verbosity: comma-separated pattern=N (file name globs without .cc).",
             ApplyVmodule});

  const std::string global = "Global flags";
  add(global,
      {"help", "h", "", DefaultText(help_), "help for kube-controller-manager", Bool(&help_)});
  add(global, {"version", "", "version[=true]", "",
               "--version, --version=raw prints version information and quits; "
               "--version=vX.Y.Z... sets the reported version",
               [this](const std::string& v) -> Status {
                 if (v == "raw") {
                   version_ = "raw";
                 } else if (v.size() > 1 && v[0] == 'v' && std::isdigit(v[1])) {
                   reported_version_ = v;
                 } else if (ParseBoolValue(v)) {
                   version_ = "true";
                 } else if (IsFalseValue(v)) {
                   version_.clear();
                 } else {
                   return ValueError("strconv.ParseBool: parsing \"" + v + "\": invalid syntax");
                 }
                 return OkStatus();
               }});
  // Last: every upstream flag not defined above, accepted and reported.
  DefineUpstreamOnlyFlags(*flags_);
}

Status CommandLine::Parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // pflag's "--version" is a bool flag that also takes "=raw"; a bare --version must not eat the
  // next argument, which FlagSet only guarantees for type-less (bool) flags.
  for (auto& a : args) {
    if (a == "--version") a = "--version=true";
  }
  return flags_->Parse(args);
}

std::map<std::string, std::string> CommandLine::FlagValues() const {
  return FlagzValues(*flags_);
}

void CommandLine::PrintUsage(std::ostream& out) const {
  flags_->PrintUsage(out,
                     "The Kubernetes controller manager runs the control loops that move the "
                     "cluster toward its desired state. This build is a C++ implementation that "
                     "runs the deployment and replicaset controllers; it takes every upstream "
                     "flag, acts on those that concern what it runs, and reports the others.");
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
      << " --controllers=" << join(o.controllers) << " --feature-gates=" << o.feature_gates.String()
      << " --concurrent-deployment-syncs=" << o.concurrent_deployment_syncs
      << " --concurrent-replicaset-syncs=" << o.concurrent_replicaset_syncs
      << " --min-resync-period=" << FormatDuration(o.min_resync_period)
      << " --controller-cache-sync-timeout=" << FormatDuration(o.controller_cache_sync_timeout)
      << " --kube-api-qps=" << FormatFloat(o.kube_api_qps)
      << " --kube-api-burst=" << o.kube_api_burst
      << " --kube-api-content-type=" << o.kube_api_content_type
      << " --use-service-account-credentials="
      << (o.use_service_account_credentials ? "true" : "false") << " --sharding=" << o.sharding
      << " --profiling=" << (o.enable_profiling ? "true" : "false")
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
      << " --logging-format=" << o.logging_format
      << " --log-flush-frequency=" << FormatDuration(o.log_flush_frequency)
      << " --v=" << o.verbosity;
  return out.str();
}

}  // namespace kcm::app
