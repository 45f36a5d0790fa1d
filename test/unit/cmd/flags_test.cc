#include "cmd/kube-controller-manager/app/flags.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "cmd/kube-controller-manager/app/upstream_flags.h"

namespace kcm::app {
namespace {

using namespace std::chrono_literals;

// Parses a command line; argv[0] is added.
Status ParseArgs(CommandLine& cmd, std::vector<std::string> args) {
  args.insert(args.begin(), "kube-controller-manager");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cmd.Parse(static_cast<int>(argv.size()), argv.data());
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// kubeadm's static-pod command line (v1.37): it parses and validates; the flags of controllers
// we do not run are accepted and reported, ours are applied. Only /etc/kubernetes is a temporary
// directory here, because Validate reads the CA files.
TEST(FlagsTest, KubeadmCommandLineRunsUnchanged) {
  const std::filesystem::path etc =
      std::filesystem::temp_directory_path() / ("kcm-flags-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(etc / "pki");
  for (const char* f : {"pki/ca.crt", "pki/front-proxy-ca.crt"}) std::ofstream(etc / f) << "x";
  std::vector<std::string> args = {
      "--allocate-node-cidrs=true",
      "--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf",
      "--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf",
      "--bind-address=127.0.0.1",
      "--client-ca-file=/etc/kubernetes/pki/ca.crt",
      "--cluster-cidr=10.244.0.0/16",
      "--cluster-name=kubernetes",
      "--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt",
      "--cluster-signing-key-file=/etc/kubernetes/pki/ca.key",
      "--controllers=*,bootstrapsigner,tokencleaner",
      "--kubeconfig=/etc/kubernetes/controller-manager.conf",
      "--leader-elect=true",
      "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
      "--root-ca-file=/etc/kubernetes/pki/ca.crt",
      "--service-account-private-key-file=/etc/kubernetes/pki/sa.key",
      "--service-cluster-ip-range=10.96.0.0/12",
      "--use-service-account-credentials=true"};
  for (std::string& a : args) {
    if (size_t at = a.find("/etc/kubernetes"); at != std::string::npos) {
      a.replace(at, std::string("/etc/kubernetes").size(), etc.string());
    }
  }
  CommandLine cmd;
  Status s = ParseArgs(cmd, args);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const Options& o = cmd.options();
  EXPECT_TRUE(Validate(o).ok()) << Validate(o).error().message;
  EXPECT_EQ(o.bind_address, "127.0.0.1");
  EXPECT_EQ(o.kubeconfig, (etc / "controller-manager.conf").string());
  EXPECT_EQ(o.authentication_kubeconfig, (etc / "controller-manager.conf").string());
  EXPECT_EQ(o.client_ca_file, (etc / "pki/ca.crt").string());
  EXPECT_TRUE(o.use_service_account_credentials);
  EXPECT_EQ(o.controllers, (std::vector<std::string>{"*", "bootstrapsigner", "tokencleaner"}));
  for (const char* name :
       {"allocate-node-cidrs", "cluster-cidr", "cluster-name", "cluster-signing-cert-file",
        "root-ca-file", "service-account-private-key-file", "service-cluster-ip-range"}) {
    EXPECT_TRUE(Contains(cmd.NotApplicable(), name)) << name;
  }
  EXPECT_FALSE(Contains(cmd.NotApplicable(), "kubeconfig"));
  EXPECT_FALSE(Contains(cmd.NotApplicable(), "use-service-account-credentials"));
  EXPECT_FALSE(Contains(cmd.NotApplicable(), "client-ca-file"));
  EXPECT_FALSE(Contains(cmd.NotApplicable(), "requestheader-client-ca-file"));
  std::filesystem::remove_all(etc);
}

// The serving and lifecycle flags reach Options; a bool flag takes only strconv.ParseBool's words.
TEST(FlagsTest, ServingFlagsAndStrictBools) {
  CommandLine cmd;
  ASSERT_TRUE(ParseArgs(cmd, {"--tls-min-version=VersionTLS13",
                              "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                              "--requestheader-username-headers=X-User,X-Other",
                              "--requestheader-allowed-names=front-proxy",
                              "--controller-cache-sync-timeout=30s"})
                  .ok());
  const Options& o = cmd.options();
  EXPECT_EQ(o.tls_min_version, "VersionTLS13");
  EXPECT_EQ(o.tls_cipher_suites,
            (std::vector<std::string>{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}));
  EXPECT_EQ(o.requestheader_username_headers, (std::vector<std::string>{"X-User", "X-Other"}));
  EXPECT_EQ(o.requestheader_allowed_names, (std::vector<std::string>{"front-proxy"}));
  EXPECT_EQ(o.controller_cache_sync_timeout, 30s);
  EXPECT_TRUE(Validate(o).ok()) << Validate(o).error().message;

  CommandLine bad;
  Status s = ParseArgs(bad, {"--leader-elect=maybe"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("strconv.ParseBool: parsing \"maybe\": invalid syntax"),
            std::string::npos)
      << s.error().message;
}

// pflag's syntax: --name=value, --name value, bare booleans, -v shorthands.
TEST(FlagsTest, PflagSyntax) {
  CommandLine cmd;
  ASSERT_TRUE(ParseArgs(cmd, {"--kube-api-qps", "50", "--kube-api-burst=70", "--leader-elect=false",
                              "--use-service-account-credentials", "-v", "3",
                              "--leader-elect-lease-duration=1m30s"})
                  .ok());
  EXPECT_EQ(cmd.options().kube_api_qps, 50);
  EXPECT_EQ(cmd.options().kube_api_burst, 70);
  EXPECT_FALSE(cmd.options().leader_election.leader_elect);
  EXPECT_TRUE(cmd.options().use_service_account_credentials);
  EXPECT_EQ(cmd.options().verbosity, 3);
  EXPECT_EQ(cmd.options().leader_election.lease_duration, 90s);
  EXPECT_EQ(FLAGS_v, 3);  // glog's own verbosity follows -v
  for (const char* v : {"-v=2", "-v2", "--v=2"}) {
    CommandLine c;
    ASSERT_TRUE(ParseArgs(c, {v}).ok()) << v;
    EXPECT_EQ(c.options().verbosity, 2) << v;
  }
}

// Errors in pflag's and cobra's words, with dashes as the user typed them.
TEST(FlagsTest, ErrorsUseUpstreamWording) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--use_service_account_credentials=true"},
            "unknown flag: --use_service_account_credentials"},
           {{"--no-such-flag=1"}, "unknown flag: --no-such-flag"},
           {{"-x"}, "unknown shorthand flag: 'x' in -x"},
           {{"--logtostderr"}, "unknown flag: --logtostderr"},
           {{"--kube-api-burst=lots"},
            "invalid argument \"lots\" for \"--kube-api-burst\" flag: strconv.ParseInt: parsing "
            "\"lots\": invalid syntax"},
           {{"--leader-elect=maybe"},
            "invalid argument \"maybe\" for \"--leader-elect\" flag: strconv.ParseBool: parsing "
            "\"maybe\": invalid syntax"},
           {{"--kubeconfig"}, "flag needs an argument: --kubeconfig"},
           {{"extra"}, "\"kube-controller-manager\" does not take any arguments, got [\"extra\"]"},
       }) {
    CommandLine cmd;
    Status s = ParseArgs(cmd, c.args);
    ASSERT_FALSE(s.ok()) << c.args[0];
    EXPECT_EQ(s.error().message, c.message);
  }
}

TEST(FlagsTest, FeatureGatesParse) {
  CommandLine cmd;
  ASSERT_TRUE(ParseArgs(cmd, {"--feature-gates=AllAlpha=false, AllBeta=true"}).ok());
  EXPECT_EQ(cmd.options().feature_gates.String(), "AllAlpha=false,AllBeta=true");
  CommandLine bad;
  Status s = ParseArgs(bad, {"--feature-gates=AllAlpha"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("missing bool value for AllAlpha"), std::string::npos);
}

// --help in upstream's layout: sections, dashed names with pflag types, defaults; glog's
// internals are not on the command line (only -v and --vmodule).
TEST(FlagsTest, HelpHasUpstreamLayout) {
  CommandLine cmd;
  ASSERT_TRUE(ParseArgs(cmd, {"--help"}).ok());
  EXPECT_TRUE(cmd.help_requested());
  std::ostringstream out;
  cmd.PrintUsage(out);
  std::string usage = out.str();
  for (const char* want :
       {"Usage:\n  kube-controller-manager [flags]\n", "\nGeneric flags:\n\n", "\nLogs flags:\n\n",
        "\nGlobal flags:\n\n", "      --kube-api-qps float32 ", "(default 20)", "  -v, --v Level ",
        "      --vmodule pattern=N,... ", "      --concurrent-deployment-syncs int32 ",
        "      --allocate-node-cidrs "}) {
    EXPECT_NE(usage.find(want), std::string::npos) << want;
  }
  for (const char* absent : {"logtostderr", "log_dir", "--log-dir", "Flags from"}) {
    EXPECT_EQ(usage.find(absent), std::string::npos) << absent;
  }
  EXPECT_LT(usage.find("Generic flags:"), usage.find("Logs flags:"));
}

// The defaults --help shows come from Options' own defaults and must be upstream's: every flag of
// the upstream table with a default shows it (for the flags we act on, through Options).
TEST(FlagsTest, HelpShowsUpstreamDefaults) {
  CommandLine cmd;
  std::ostringstream out;
  cmd.PrintUsage(out);
  const std::string usage = out.str();
  std::set<std::string> checked;
  for (const UpstreamFlag& u : UpstreamFlags()) {
    if (std::string_view(u.default_text).empty() || *u.shorthand != '\0') continue;
    // The flag's entry: from its line to the next flag's, usage wraps joined by one space.
    const std::string head = std::string("\n      --") + u.name + " ";
    const std::size_t at = usage.find(head);
    ASSERT_NE(at, std::string::npos) << u.name;
    const std::size_t end = usage.find("\n      --", at + head.size());
    std::string entry;
    for (const char c : usage.substr(at + 1, end == std::string::npos ? end : end - at - 1)) {
      const bool space = c == ' ' || c == '\n';
      if (!space || (!entry.empty() && entry.back() != ' ')) entry.push_back(space ? ' ' : c);
    }
    EXPECT_NE(entry.find(std::string("(default ") + u.default_text + ")"), std::string::npos)
        << entry;
    checked.insert(u.name);
  }
  // Among them, flags whose default comes from Options (and from there the libraries' options).
  for (const char* ours :
       {"concurrent-deployment-syncs", "concurrent-replicaset-syncs", "kube-api-qps",
        "kube-api-burst", "leader-elect-lease-duration", "leader-elect-renew-deadline",
        "leader-elect-retry-period", "secure-port", "bind-address", "min-resync-period",
        "requestheader-username-headers", "authorization-always-allow-paths"}) {
    EXPECT_TRUE(checked.contains(ours)) << ours;
  }
}

TEST(FlagsTest, VersionFlag) {
  CommandLine plain, raw, none;
  ASSERT_TRUE(ParseArgs(plain, {"--version"}).ok());
  EXPECT_EQ(plain.version_requested(), "true");
  ASSERT_TRUE(ParseArgs(raw, {"--version=raw"}).ok());
  EXPECT_EQ(raw.version_requested(), "raw");
  ASSERT_TRUE(ParseArgs(none, {"--version=false"}).ok());
  EXPECT_EQ(none.version_requested(), "");
}

// Found by fuzz/flags: EffectiveFlags (the start-up log line) printed --kube-api-qps with an
// ostream's 6 significant digits, so 0.1234567 was logged as 0.123457; it now prints the shortest
// text that parses back to the same value, and the logged line, given back, means the same.
TEST(FlagsTest, EffectiveFlagsShowTheExactQps) {
  for (const char* qps : {"0.1234567", "20", "1e-07", "123456789.125", "-1"}) {
    CommandLine cmd;
    ASSERT_TRUE(ParseArgs(cmd, {std::string("--kube-api-qps=") + qps}).ok()) << qps;
    const std::string effective = EffectiveFlags(cmd.options());
    EXPECT_NE(effective.find(std::string(" --kube-api-qps=") + qps + " "), std::string::npos)
        << effective;
  }
}

}  // namespace
}  // namespace kcm::app
