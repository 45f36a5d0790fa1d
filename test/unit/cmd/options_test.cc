#include "cmd/kube-controller-manager/app/options.h"

#include <gtest/gtest.h>

namespace kcm::app {
namespace {

using namespace std::chrono_literals;

TEST(OptionsTest, DefaultsAreUpstreamsAndValid) {
  Options o;
  EXPECT_EQ(o.concurrent_deployment_syncs, 5);
  EXPECT_EQ(o.concurrent_replicaset_syncs, 5);
  EXPECT_EQ(o.min_resync_period, 12h);
  EXPECT_EQ(o.kube_api_qps, 20);
  EXPECT_EQ(o.kube_api_burst, 30);
  EXPECT_TRUE(o.leader_election.leader_elect);
  EXPECT_EQ(o.leader_election.lease_duration, 15s);
  EXPECT_EQ(o.leader_election.renew_deadline, 10s);
  EXPECT_EQ(o.leader_election.retry_period, 2s);
  EXPECT_EQ(o.secure_port, 10257);
  EXPECT_TRUE(Validate(o).ok());
}

// daemon.md --controllers: scanned in order, first match wins.
TEST(OptionsTest, ControllersListFirstMatchWins) {
  EXPECT_TRUE(IsControllerEnabled("deployment", {"*"}));
  EXPECT_TRUE(IsControllerEnabled("replicaset", {"*"}));
  EXPECT_FALSE(IsControllerEnabled("deployment", {"-deployment", "*"}));
  EXPECT_TRUE(IsControllerEnabled("replicaset", {"-deployment", "*"}));
  EXPECT_TRUE(IsControllerEnabled("deployment", {"deployment", "-deployment"}));
  EXPECT_FALSE(IsControllerEnabled("replicaset", {"deployment"}));
  EXPECT_TRUE(IsControllerEnabled("replicaset", {"replicaset-controller"}));
  EXPECT_FALSE(IsControllerEnabled("deployment", {"-deployment-controller", "*"}));
  EXPECT_FALSE(IsControllerEnabled("deployment", {}));
}

TEST(OptionsTest, UnknownControllerNamesTheFlag) {
  Options o;
  o.controllers = {"deployment", "-nosuchthing"};
  Status s = Validate(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("--controllers"), std::string::npos);
  EXPECT_NE(s.error().message.find("nosuchthing"), std::string::npos);
}

// Upstream's ValidateControllersOptions knows every controller name (and alias) upstream has;
// kubeadm's "*,bootstrapsigner,tokencleaner" is valid, and the ones we do not run are reported.
TEST(OptionsTest, UpstreamControllerNamesAreValidAndReportedAsNotRun) {
  Options o;
  o.controllers = {"*", "bootstrapsigner", "tokencleaner", "-cronjob", "cronjob-controller"};
  EXPECT_TRUE(Validate(o).ok()) << Validate(o).error().message;
  EXPECT_EQ(NotRunControllers(o.controllers),
            (std::vector<std::string>{"bootstrapsigner", "tokencleaner", "cronjob-controller"}));
  EXPECT_TRUE(IsControllerEnabled("deployment", o.controllers));
}

// Upstream's IsControllerEnabled: an explicit name decides wherever it stands; "*" only fills
// in when there is none, so "*,-deployment" turns deployment off.
TEST(OptionsTest, ExplicitControllerChoiceBeatsStarWhereverItStands) {
  EXPECT_FALSE(IsControllerEnabled("deployment", {"*", "-deployment"}));
  EXPECT_TRUE(IsControllerEnabled("replicaset", {"*", "-deployment"}));
  EXPECT_FALSE(IsControllerEnabled("replicaset", {"*", "-replicaset-controller"}));
}

TEST(OptionsTest, FeatureGatesAcceptEveryUpstreamNameAndTheKubeComponent) {
  features::FeatureGate gates;
  Status unknown = gates.Set("NoSuchGate=true");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unrecognized feature gate: NoSuchGate");
  // An upstream gate this binary does not act on (kubeadm passes such lines) is accepted.
  ASSERT_TRUE(gates.Set("AllAlpha=false").ok());
  EXPECT_EQ(gates.String(), "AllAlpha=false");
  ASSERT_TRUE(gates.Set("kube:StaleControllerConsistencyReplicaSet=false").ok());
  EXPECT_FALSE(gates.Enabled(features::kStaleControllerConsistencyReplicaSet));
  Status component = gates.Set("other:AllAlpha=true");
  ASSERT_FALSE(component.ok());
  EXPECT_EQ(component.error().message, "unknown component \"other\" in other:AllAlpha=true");
}

TEST(OptionsTest, LoggingFormatIsTextOrJson) {
  Options o;
  o.logging_format = "json";
  EXPECT_TRUE(Validate(o).ok());
  o.logging_format = "xml";
  ASSERT_FALSE(Validate(o).ok());
  EXPECT_EQ(Validate(o).error().message.rfind("--logging-format:", 0), 0u);
}

TEST(OptionsTest, InvalidValuesNameTheirFlag) {
  struct Case {
    void (*mutate)(Options&);
    const char* flag;
  };
  const Case cases[] = {
      {[](Options& o) { o.concurrent_deployment_syncs = 0; }, "--concurrent-deployment-syncs"},
      {[](Options& o) { o.concurrent_replicaset_syncs = -1; }, "--concurrent-replicaset-syncs"},
      {[](Options& o) { o.kube_api_qps = 0; }, "--kube-api-qps"},
      {[](Options& o) { o.kube_api_burst = 0; }, "--kube-api-burst"},
      {[](Options& o) { o.min_resync_period = 0s; }, "--min-resync-period"},
      {[](Options& o) { o.leader_election.renew_deadline = 20s; }, "--leader-elect-lease-duration"},
      {[](Options& o) { o.leader_election.retry_period = 9s; }, "--leader-elect-renew-deadline"},
      {[](Options& o) { o.secure_port = 70000; }, "--secure-port"},
      {[](Options& o) { o.tls_cert_file = "/x.crt"; }, "--tls-cert-file"},
      {[](Options& o) { o.kube_api_content_type = "text/plain"; }, "--kube-api-content-type"},
      {[](Options& o) { o.tls_min_version = "VersionTLS11"; }, "--tls-min-version"},
      {[](Options& o) { o.tls_min_version = "TLS1.3"; }, "--tls-min-version"},
      {[](Options& o) { o.tls_cipher_suites = {"TLS_NOT_A_SUITE"}; }, "--tls-cipher-suites"},
      {[](Options& o) { o.client_ca_file = "/nonexistent/ca.crt"; }, "--client-ca-file"},
      {[](Options& o) { o.requestheader_client_ca_file = "/nonexistent/ca.crt"; },
       "--requestheader-client-ca-file"},
      {[](Options& o) {
         o.authorization_always_allow_paths = {"/healthz", "/a*b"};
       },
       "--authorization-always-allow-paths"},
  };
  for (const Case& c : cases) {
    Options o;
    c.mutate(o);
    Status s = Validate(o);
    ASSERT_FALSE(s.ok()) << c.flag;
    EXPECT_EQ(s.error().message.rfind(std::string(c.flag) + ":", 0), 0u) << s.error().message;
  }
}

// Upstream builds its path authorizer only when serving: with --secure-port=0 a malformed
// --authorization-always-allow-paths entry is not looked at.
TEST(OptionsTest, AlwaysAllowPathsCheckedOnlyWhenServing) {
  Options o;
  o.authorization_always_allow_paths = {"/a*b"};
  o.secure_port = 0;
  EXPECT_TRUE(Validate(o).ok());
  o.authorization_always_allow_paths = {"metrics", "/debug/*", "*"};
  o.secure_port = 10257;
  EXPECT_TRUE(Validate(o).ok()) << Validate(o).error().message;
}

// Upstream's IANA names, secure and insecure, and the TLS 1.3 ones are all accepted.
TEST(OptionsTest, TLSFlagsAcceptUpstreamNames) {
  Options o;
  o.tls_min_version = "VersionTLS13";
  o.tls_cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                         "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                         "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"};
  EXPECT_TRUE(Validate(o).ok());
}

TEST(OptionsTest, NegativeQpsDisablesLimiterAndIsValid) {
  Options o;
  o.kube_api_qps = -1;
  o.kube_api_burst = 0;
  EXPECT_TRUE(Validate(o).ok());
}

TEST(OptionsTest, LeaderElectionTimingOnlyCheckedWhenEnabled) {
  Options o;
  o.leader_election.leader_elect = false;
  o.leader_election.renew_deadline = 1h;
  EXPECT_TRUE(Validate(o).ok());
}

TEST(OptionsTest, SplitListTrimsAndDropsEmpty) {
  EXPECT_EQ(SplitList(" a, b ,,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitList("").empty());
}

// Upstream component-base featuregate.Set: known names only, bool values, defaults as in
// pkg/features/kube_features.go of v1.37.
TEST(FeatureGatesTest, StaleControllerConsistencyReplicaSetIsOnByDefault) {
  features::FeatureGate gates;
  EXPECT_TRUE(gates.Enabled(features::kStaleControllerConsistencyReplicaSet));
  EXPECT_FALSE(gates.Enabled("NoSuchGate"));
  EXPECT_EQ(gates.String(), "");
}

TEST(FeatureGatesTest, SetParsesPairsAndKeepsOthersAtDefault) {
  features::FeatureGate gates;
  ASSERT_TRUE(
      gates.Set(" StaleControllerConsistencyReplicaSet=false , StaleControllerConsistencyJob=True,")
          .ok());
  EXPECT_FALSE(gates.Enabled(features::kStaleControllerConsistencyReplicaSet));
  EXPECT_TRUE(gates.Enabled("StaleControllerConsistencyJob"));
  EXPECT_TRUE(gates.Enabled("StaleControllerConsistencyStatefulSet"));
  EXPECT_EQ(gates.String(),
            "StaleControllerConsistencyJob=true,StaleControllerConsistencyReplicaSet=false");
}

TEST(FeatureGatesTest, UnknownNameOrBadValueIsAnErrorAndChangesNothing) {
  features::FeatureGate gates;
  Status unknown = gates.Set("StaleControllerConsistencyReplicaSet=false,NoSuchGate=true");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unrecognized feature gate: NoSuchGate");
  EXPECT_TRUE(gates.Enabled(features::kStaleControllerConsistencyReplicaSet));

  Status bad = gates.Set("StaleControllerConsistencyReplicaSet=maybe");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("invalid value of StaleControllerConsistencyReplicaSet=maybe"),
            std::string::npos);
  Status missing = gates.Set("StaleControllerConsistencyReplicaSet");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "missing bool value for StaleControllerConsistencyReplicaSet");
  EXPECT_TRUE(gates.Enabled(features::kStaleControllerConsistencyReplicaSet));
}

}  // namespace
}  // namespace kcm::app
