// The operators' endpoints of the daemon binary on a private testbed, as an operator reads them
// with a token: /configz, /statusz, /flagz, /metrics/slis, /debug/flags/v and the component-base
// metrics in /metrics (kubernetes_build_info, kubernetes_feature_enabled), behind the same
// delegated authentication and authorization as /metrics (a real TokenReview and
// SubjectAccessReview), --authorization-always-allow-paths opening one of them, and the shapes
// upstream v1.37.2 serves (captured from its binary on the same testbed; see the commit).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <sstream>

#include "pkg/api/json.h"
#include "test/e2e/daemon/daemon_e2e_util.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"
#include "test/unit/server/tls_client.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using server::testing::GetOptions;
using server::testing::HttpsGet;
using server::testing::HttpsResponse;
using testenv::Eventually;
namespace json = api::json;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 1});

constexpr const char* kStatuszJson = "application/json;g=config.k8s.io;v=v1beta1;as=Statusz";
constexpr const char* kFlagzJson = "application/json;g=config.k8s.io;v=v1beta1;as=Flagz";

class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extra_args)
      : port_(testenv::FreeLoopbackPort()),
        process_(Args(port_, std::move(extra_args)), LogPath()) {
    serving_ = Eventually([&] { return HttpsGet(port_, "/healthz").code == 200; }, 30s);
  }
  bool serving() const { return serving_; }
  std::string Log() const { return process_.Log(); }
  int StopWith(int sig) { return process_.StopWith(sig); }
  // As the admin (system:masters) unless `options` names other credentials.
  HttpsResponse Call(const std::string& path, GetOptions options = {}) const {
    if (options.token.empty()) options.token = kEnv->info().admin_token;
    return HttpsGet(port_, path, options);
  }
  HttpsResponse Anonymous(const std::string& path, const std::string& method = "GET") const {
    return HttpsGet(port_, path, {.method = method});
  }

 private:
  static std::vector<std::string> Args(int port, std::vector<std::string> extra) {
    std::vector<std::string> args = {KCM_DAEMON_PATH, "--kubeconfig=" + kEnv->info().kcm_kubeconfig,
                                     "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port),
                                     // The Lease name deploy/rbac.yaml grants.
                                     "--leader-elect-resource-name=kube-controller-manager-cpp"};
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }
  std::string LogPath() const {
    return ::testing::TempDir() + "kcm-operator-endpoints-e2e-" + std::to_string(::getpid()) + "-" +
           std::to_string(port_) + ".log";
  }

  int port_;
  testenv::DaemonProcess process_;
  bool serving_ = false;
};

const json::Value* At(const json::Value& v, json::Path path) {
  const json::Value* found = json::GetPath(v, path);
  static const json::Value kNull;
  return found ? found : &kNull;
}

std::string Str(const json::Value& v, json::Path path) {
  const json::Value* found = At(v, path);
  return found->is_string() ? found->as_string() : "<missing>";
}

// Without credentials: 401 everywhere but the always-allowed paths; a user without RBAC for the
// path: 403 from a real SubjectAccessReview, for PUT as "put"; an always-allowed z-page is served
// to anyone.
TEST(OperatorEndpointsE2E, BehindDelegatedAuthnAuthzAndAlwaysAllowPaths) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--authorization-always-allow-paths=/healthz,/readyz,/livez,/statusz"});
  ASSERT_TRUE(d.serving()) << d.Log();
  for (const char* path : {"/configz", "/flagz", "/metrics/slis", "/debug/flags/v"}) {
    EXPECT_EQ(d.Anonymous(path).code, 401) << path;
    auto denied = d.Call(path, {.token = kEnv->info().kcm_token});
    EXPECT_EQ(denied.code, 403) << path << denied.body;
    const long admin = d.Call(path).code;  // /debug/flags/v answers a GET 406
    EXPECT_TRUE(admin == 200 || admin == 406) << path << " " << admin;
  }
  EXPECT_EQ(d.Anonymous("/debug/flags/v", "PUT").code, 401);
  auto put_denied =
      d.Call("/debug/flags/v", {.token = kEnv->info().kcm_token, .method = "PUT", .body = "3"});
  EXPECT_EQ(put_denied.code, 403);
  EXPECT_NE(put_denied.body.find("cannot put path \"/debug/flags/v\""), std::string::npos)
      << put_denied.body;
  auto statusz = d.Anonymous("/statusz");
  EXPECT_EQ(statusz.code, 200) << statusz.body;
  EXPECT_NE(statusz.body.find("kube-controller-manager statusz"), std::string::npos);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// /configz: the effective configuration in upstream's KubeControllerManagerConfiguration shape,
// flags applied.
TEST(OperatorEndpointsE2E, ConfigzShowsTheEffectiveConfiguration) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--concurrent-deployment-syncs=7", "--kube-api-qps=33", "--min-resync-period=6h"});
  ASSERT_TRUE(d.serving()) << d.Log();
  auto r = d.Call("/configz");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  auto parsed = json::Parse(r.body);
  ASSERT_TRUE(parsed.ok()) << r.body;
  const json::Value* c = At(*parsed, {"kubecontrollermanager.config.k8s.io"});
  EXPECT_EQ(Str(*c, {"kind"}), "KubeControllerManagerConfiguration");
  EXPECT_EQ(Str(*c, {"apiVersion"}), "kubecontrollermanager.config.k8s.io/v1alpha1");
  EXPECT_EQ(At(*c, {"DeploymentController", "ConcurrentDeploymentSyncs"})->as_int64(), 7);
  EXPECT_EQ(At(*c, {"ReplicaSetController", "ConcurrentRSSyncs"})->as_int64(), 5);
  EXPECT_EQ(At(*c, {"Generic", "ClientConnection", "qps"})->number_text(), "33");
  EXPECT_EQ(Str(*c, {"Generic", "MinResyncPeriod"}), "6h0m0s");
  EXPECT_EQ(Str(*c, {"Generic", "LeaderElection", "resourceName"}), "kube-controller-manager-cpp");
  EXPECT_EQ(Str(*c, {"Generic", "LeaderElection", "leaseDuration"}), "15s");
  EXPECT_TRUE(At(*c, {"Generic", "LeaderElection", "leaderElect"})->as_bool());
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// /statusz and /flagz: text by default, config.k8s.io/v1beta1 JSON by Accept, 406 otherwise;
// the ComponentStatusz/ComponentFlagz gates turn them off.
TEST(OperatorEndpointsE2E, StatuszAndFlagzNegotiateTheirForms) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--concurrent-replicaset-syncs=9", "--leader-elect-lease-duration=16000ms"});
  ASSERT_TRUE(d.serving()) << d.Log();

  auto text = d.Call("/statusz");
  ASSERT_EQ(text.code, 200) << text.body;
  EXPECT_EQ(text.content_type, "text/plain; charset=utf-8");
  EXPECT_NE(text.body.find("Warning: This endpoint is not meant to be machine parseable"),
            std::string::npos);
  auto statusz = d.Call("/statusz", {.headers = {std::string("Accept: ") + kStatuszJson}});
  ASSERT_EQ(statusz.code, 200) << statusz.body;
  EXPECT_EQ(statusz.content_type, kStatuszJson);
  auto s = json::Parse(statusz.body);
  ASSERT_TRUE(s.ok()) << statusz.body;
  EXPECT_EQ(Str(*s, {"kind"}), "Statusz");
  EXPECT_EQ(Str(*s, {"apiVersion"}), "config.k8s.io/v1beta1");
  EXPECT_EQ(Str(*s, {"binaryVersion"}).rfind("1.37.2", 0), 0u) << statusz.body;
  EXPECT_EQ(Str(*s, {"emulationVersion"}), "1.37");
  std::string paths;
  for (const auto& p : At(*s, {"paths"})->as_array()) paths += p.as_string() + " ";
  EXPECT_EQ(paths, "/configz /flagz /healthz /livez /metrics /readyz ") << statusz.body;

  // curl gets it indented, as upstream's isPrettyPrint decides by User-Agent.
  auto pretty = d.Call(
      "/statusz", {.headers = {std::string("Accept: ") + kStatuszJson, "User-Agent: curl/8.5.0"}});
  EXPECT_EQ(pretty.body.rfind("{\n  \"kind\": \"Statusz\",\n", 0), 0u) << pretty.body;

  auto flagz = d.Call("/flagz", {.headers = {std::string("Accept: ") + kFlagzJson}});
  ASSERT_EQ(flagz.code, 200) << flagz.body;
  auto f = json::Parse(flagz.body);
  ASSERT_TRUE(f.ok()) << flagz.body;
  EXPECT_EQ(Str(*f, {"kind"}), "Flagz");
  EXPECT_EQ(Str(*f, {"flags", "concurrent-replicaset-syncs"}), "9");
  EXPECT_EQ(Str(*f, {"flags", "leader-elect-lease-duration"}), "16s");  // pflag's String()
  EXPECT_EQ(Str(*f, {"flags", "leader-elect"}), "true");
  EXPECT_EQ(Str(*f, {"flags", "controllers"}), "[*]");
  EXPECT_EQ(Str(*f, {"flags", "node-monitor-period"}), "5s");  // a flag we only accept
  auto flagz_text = d.Call("/flagz");
  EXPECT_EQ(flagz_text.code, 200);
  EXPECT_NE(flagz_text.body.find("concurrent-replicaset-syncs"), std::string::npos);

  for (const char* accept : {"application/json", "text/html", "application/json;as=Flagz"}) {
    auto bad = d.Call("/statusz", {.headers = {std::string("Accept: ") + accept}});
    EXPECT_EQ(bad.code, 406) << accept;
    auto status = json::Parse(bad.body);  // compact or indented, as upstream's (see zpages_test)
    ASSERT_TRUE(status.ok()) << bad.body;
    EXPECT_EQ(Str(*status, {"reason"}), "NotAcceptable") << bad.body;
  }
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();

  Daemon off({"--feature-gates=ComponentStatusz=false,ComponentFlagz=false"});
  ASSERT_TRUE(off.serving()) << off.Log();
  EXPECT_EQ(off.Call("/statusz").code, 404);
  EXPECT_EQ(off.Call("/flagz").code, 404);
  EXPECT_EQ(off.Call("/configz").code, 200);
  EXPECT_EQ(off.StopWith(SIGTERM), 0) << off.Log();
}

double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// /metrics/slis: each health check a /healthz or /readyz ran, as upstream's SLI families;
// promtool-clean; DELETE resets them.
TEST(OperatorEndpointsE2E, MetricsSlisRecordHealthChecks) {
  KCM_REQUIRE_TESTBED();
  Daemon d({});
  ASSERT_TRUE(d.serving()) << d.Log();
  ASSERT_EQ(d.Anonymous("/healthz").code, 200);
  ASSERT_EQ(d.Anonymous("/healthz").code, 200);
  auto slis = d.Call("/metrics/slis");
  ASSERT_EQ(slis.code, 200) << slis.body;
  EXPECT_EQ(Sample(slis.body, "kubernetes_healthcheck{name=\"ping\",type=\"healthz\"}"), 1)
      << slis.body;
  EXPECT_GE(Sample(slis.body,
                   "kubernetes_healthchecks_total{name=\"leaderElection\",status="
                   "\"success\",type=\"healthz\"}"),
            2)
      << slis.body;
  EXPECT_GT(Sample(slis.body, "process_start_time_seconds"), 1.6e9) << slis.body;
  EXPECT_NE(slis.body.find("# HELP kubernetes_healthcheck [STABLE]"), std::string::npos);
  auto promtool = testenv::RunCommand({"promtool", "check", "metrics"}, 30s, slis.body);
  EXPECT_TRUE(promtool.ok()) << promtool.Describe() << promtool.out;

  auto reset = d.Call("/metrics/slis", {.method = "DELETE"});
  EXPECT_EQ(reset.code, 200);
  EXPECT_EQ(reset.body, "metrics reset\n");
  EXPECT_EQ(d.Call("/metrics/slis").body, "");
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// /metrics: kubernetes_build_info and one kubernetes_feature_enabled series per upstream gate
// (254 in v1.37.2), set ones as set; no running_managed_controllers (upstream emits it only for
// controllers this binary does not run); kcm_threads and the loop's CPU; promtool-clean.
TEST(OperatorEndpointsE2E, MetricsHaveBuildInfoAndFeatureGates) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--feature-gates=StaleControllerConsistencyReplicaSet=false"});
  ASSERT_TRUE(d.serving()) << d.Log();
  auto r = d.Call("/metrics");
  ASSERT_EQ(r.code, 200);
  std::istringstream in(r.body);
  int gates = 0, build_info = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kubernetes_feature_enabled{", 0) == 0) ++gates;
    if (line.rfind("kubernetes_build_info{", 0) == 0) {
      ++build_info;
      EXPECT_NE(line.find("git_version=\"v1.37.2+cpp."), std::string::npos) << line;
      EXPECT_NE(line.find("major=\"1\",minor=\"37\""), std::string::npos) << line;
      EXPECT_EQ(line.substr(line.size() - 2), " 1") << line;
    }
  }
  EXPECT_EQ(gates, 254);
  EXPECT_EQ(build_info, 1);
  EXPECT_EQ(Sample(r.body,
                   "kubernetes_feature_enabled{name=\"StaleControllerConsistencyReplicaSet\","
                   "stage=\"BETA\"}"),
            0);
  EXPECT_EQ(Sample(r.body, "kubernetes_feature_enabled{name=\"ComponentStatusz\",stage=\"BETA\"}"),
            1);
  EXPECT_EQ(r.body.find("running_managed_controllers"), std::string::npos);
  // Ours beside them: the threads, and the client loop's CPU time (its busy time).
  EXPECT_GT(Sample(r.body, "kcm_threads"), 1);
  EXPECT_GE(Sample(r.body, "kcm_thread_cpu_seconds_total{thread=\"kcm-curl-loop\"}"), 0);
  auto promtool = testenv::RunCommand({"promtool", "check", "metrics"}, 30s, r.body);
  EXPECT_TRUE(promtool.ok()) << promtool.Describe() << promtool.out;
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// /debug/flags/v: a PUT of a number changes the verbosity at once (V(4) lines start); a bad
// value is 400 and changes nothing; GET is 406; --profiling=false takes the endpoint away.
TEST(OperatorEndpointsE2E, DebugFlagsVChangesVerbosityAtRunTime) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--v=0"});
  ASSERT_TRUE(d.serving()) << d.Log();
  ASSERT_TRUE(Eventually([&] { return d.Anonymous("/readyz").code == 200; }, 60s)) << d.Log();
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "e2e-zpages-v"}).ok());
  auto apply = [&](const std::string& name) {
    return kEnv->Kubectl({"apply", "-f", "-"}, 30s,
                         PauseWorkloadYaml("Deployment", name, "e2e-zpages-v", 1));
  };
  // V(4): the deployment controller's "ReplicaSet added" replicaSet="<ns>/<name>".
  const std::string v4 =
      R"("ReplicaSet added" logger="deployment-controller" replicaSet="e2e-zpages-v/)";
  ASSERT_TRUE(apply("quiet").ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return kEnv->Kubectl({"-n", "e2e-zpages-v", "get", "rs", "-l", "app=quiet", "-o", "name"})
                   .out.find("replicaset") != std::string::npos;
      },
      30s));
  EXPECT_EQ(d.Log().find(v4 + "quiet"), std::string::npos);

  for (const char* bad : {"x", "-1", "4\n", "", "99999999999"}) {
    auto r = d.Call("/debug/flags/v", {.method = "PUT", .body = bad});
    EXPECT_EQ(r.code, 400) << bad;
    EXPECT_NE(r.body.find("strconv.ParseUint: parsing"), std::string::npos) << r.body;
  }
  auto get = d.Call("/debug/flags/v");
  EXPECT_EQ(get.code, 406);
  EXPECT_EQ(get.body, "unsupported http method\n");
  auto put = d.Call("/debug/flags/v", {.method = "PUT", .body = "4"});
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(put.body, "successfully set klog.logging.verbosity to 4\n");
  auto flagz = d.Call("/flagz", {.headers = {std::string("Accept: ") + kFlagzJson}});
  EXPECT_NE(flagz.body.find("\"v\":\"4\""), std::string::npos) << flagz.body;
  ASSERT_TRUE(apply("loud").ok());
  EXPECT_TRUE(Eventually([&] { return d.Log().find(v4 + "loud") != std::string::npos; }, 30s))
      << d.Log();
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();

  Daemon off({"--profiling=false"});
  ASSERT_TRUE(off.serving()) << off.Log();
  EXPECT_EQ(off.Call("/debug/flags/v", {.method = "PUT", .body = "4"}).code, 404);
  EXPECT_EQ(off.StopWith(SIGTERM), 0) << off.Log();
}

// --vmodule raises one source file's verbosity for the contextual loggers' lines too: the
// deployment controller's V(4) "ReplicaSet added" comes out, the runtime's V(4) "Finished
// syncing" (pkg/runtime/controller.cc), logged for the same Deployment before it, does not.
TEST(OperatorEndpointsE2E, VModuleRaisesOneFilesVerbosity) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--v=0", "--vmodule=deployment_controller=4"});
  ASSERT_TRUE(d.serving()) << d.Log();
  ASSERT_TRUE(Eventually([&] { return d.Anonymous("/readyz").code == 200; }, 60s)) << d.Log();
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "e2e-vmodule"}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"apply", "-f", "-"}, 30s,
                            PauseWorkloadYaml("Deployment", "web", "e2e-vmodule", 1))
                  .ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return d.Log().find(R"("ReplicaSet added" logger="deployment-controller" )"
                            R"(replicaSet="e2e-vmodule/web-)") != std::string::npos;
      },
      30s))
      << d.Log();
  EXPECT_EQ(d.Log().find("\"Finished syncing\""), std::string::npos) << d.Log();
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

}  // namespace
}  // namespace kcm::e2e
