// What the daemon's operators' endpoints are fed: /flagz's values as pflag prints them, /configz's
// configuration from the effective options, and the /debug/flags/v verbosity setter.
#include "cmd/kube-controller-manager/app/operator_endpoints.h"

#include <glog/logging.h>
#include <gtest/gtest.h>

#include "cmd/kube-controller-manager/app/configz.h"
#include "cmd/kube-controller-manager/app/flags.h"
#include "cmd/kube-controller-manager/app/flagz_values.h"

namespace kcm::app {
namespace {

namespace json = api::json;

Result<CommandLine*> Parsed(CommandLine& cmd, std::vector<std::string> args) {
  args.insert(args.begin(), "kube-controller-manager");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (Status s = cmd.Parse(static_cast<int>(argv.size()), argv.data()); !s.ok()) return s.error();
  return &cmd;
}

TEST(FlagzValuesTest, ValuesPrintAsPflagPrintsThem) {
  EXPECT_EQ(PflagValueString("", "1"), "true");
  EXPECT_EQ(PflagValueString("", "F"), "false");
  EXPECT_EQ(PflagValueString("duration", "1500ms"), "1.5s");
  EXPECT_EQ(PflagValueString("duration", "12h"), "12h0m0s");
  EXPECT_EQ(PflagValueString("strings", "*,-deployment"), "[*,-deployment]");
  EXPECT_EQ(PflagValueString("strings", ""), "[]");
  EXPECT_EQ(PflagValueString("int32", "007"), "7");
  EXPECT_EQ(PflagValueString("float32", "20.0"), "20");
  EXPECT_EQ(PflagValueString("float32", "0.1"), "0.1");
  EXPECT_EQ(PflagValueString("string", "x y"), "x y");
}

TEST(FlagzValuesTest, EveryFlagWithGivenOrDefaultValue) {
  CommandLine cmd;
  ASSERT_TRUE(Parsed(cmd, {"--concurrent-deployment-syncs=7", "--leader-elect=false",
                           "--node-monitor-period=10s", "--controllers=*,-replicaset", "-v=3"})
                  .ok());
  auto values = cmd.FlagValues();
  EXPECT_EQ(values["concurrent-deployment-syncs"], "7");
  EXPECT_EQ(values["concurrent-replicaset-syncs"], "5");  // default
  EXPECT_EQ(values["leader-elect"], "false");
  EXPECT_EQ(values["leader-elect-lease-duration"], "15s");
  EXPECT_EQ(values["leader-elect-resource-name"], "kube-controller-manager");
  EXPECT_EQ(values["node-monitor-period"], "10s");  // accepted, not acted on: still listed
  EXPECT_EQ(values["controllers"], "[*,-replicaset]");
  EXPECT_EQ(values["v"], "3");
  EXPECT_EQ(values["kubeconfig"], "");
  EXPECT_EQ(values["profiling"], "true");
  EXPECT_TRUE(values.contains("cluster-cidr"));
  EXPECT_GT(values.size(), 100u);
}

TEST(ConfigzTest, UpstreamsShapeWithTheEffectiveValues) {
  CommandLine cmd;
  ASSERT_TRUE(Parsed(cmd, {"--concurrent-replicaset-syncs=11", "--kube-api-qps=12.5",
                           "--leader-elect-resource-namespace=ops", "--profiling=false"})
                  .ok());
  json::Value c = KubeControllerManagerConfiguration(cmd.options());
  EXPECT_EQ(json::GetPath(c, {"kind"})->as_string(), "KubeControllerManagerConfiguration");
  EXPECT_EQ(json::GetPath(c, {"apiVersion"})->as_string(),
            "kubecontrollermanager.config.k8s.io/v1alpha1");
  EXPECT_EQ(json::GetPath(c, {"ReplicaSetController", "ConcurrentRSSyncs"})->as_int64(), 11);
  EXPECT_EQ(json::GetPath(c, {"DeploymentController", "ConcurrentDeploymentSyncs"})->as_int64(), 5);
  EXPECT_EQ(json::GetPath(c, {"Generic", "ClientConnection", "qps"})->number_text(), "12.5");
  EXPECT_EQ(json::GetPath(c, {"Generic", "LeaderElection", "resourceNamespace"})->as_string(),
            "ops");
  EXPECT_EQ(json::GetPath(c, {"Generic", "MinResyncPeriod"})->as_string(), "12h0m0s");
  EXPECT_FALSE(json::GetPath(c, {"Generic", "Debugging", "enableProfiling"})->as_bool());
}

TEST(SetVerbosityTest, DecimalUint32OnlyWithUpstreamsWording) {
  const int32_t before = FLAGS_v;
  auto ok = SetVerbosity("5");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "successfully set klog.logging.verbosity to 5");
  EXPECT_EQ(FLAGS_v, 5);
  for (const char* bad : {"", "x", "-1", "5\n", " 5", "4294967296"}) {
    auto r = SetVerbosity(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("strconv.ParseUint: parsing \"", 0), 0u) << r.error().message;
    EXPECT_EQ(FLAGS_v, 5) << bad;
  }
  EXPECT_EQ(SetVerbosity("4294967296").error().message,
            "strconv.ParseUint: parsing \"4294967296\": value out of range");
  FLAGS_v = before;
}

}  // namespace
}  // namespace kcm::app
