// The kube-controller-manager binary driven as an operator would: bad flags, an
// unreachable API server, /metrics checked by promtool and moving during a rollout, readiness,
// graceful stop, and leader failover between two replicas. Each test gets a private testbed: the
// daemon watches every namespace, so it must not share one with in-process controller tests.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using testenv::Eventually;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 2});

// Our daemon on the testbed under the controller-manager user's RBAC, serving on a free port.
class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extra_args)
      : port_(testenv::FreeLoopbackPort()),
        process_(Args(port_, std::move(extra_args)), LogPath(port_)) {}

  bool Running() { return process_.Running(); }
  int StopWith(int sig) { return process_.StopWith(sig); }
  std::string Log() const { return process_.Log(); }
  pid_t pid() const { return process_.pid(); }
  std::pair<int, std::string> Get(const std::string& path, const std::string& token = "") const {
    return testenv::HttpsGet(port_, path, token);
  }

 private:
  static std::vector<std::string> Args(int port, std::vector<std::string> extra) {
    std::vector<std::string> args = {KCM_DAEMON_PATH, "--kubeconfig=" + kEnv->info().kcm_kubeconfig,
                                     "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port),
                                     "--leader-elect-resource-name=kube-controller-manager-cpp"};
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }
  static std::string LogPath(int port) {
    return testing::TempDir() + "kcm-e2e-" + std::to_string(::getpid()) + "-" +
           std::to_string(port) + ".log";
  }

  int port_;
  testenv::DaemonProcess process_;
};

// The value of a sample line `<series> <value>` in a Prometheus text page (0 when absent).
double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return 0;
}

std::string LeaseHolder() {
  auto r = kEnv->Kubectl({"-n", "kube-system", "get", "lease", "kube-controller-manager-cpp", "-o",
                          "jsonpath={.spec.holderIdentity}"});
  return r.ok() ? r.out : "";
}

TEST(DaemonE2E, BadFlagsExitNonZeroNamingTheFlag) {
  struct Case {
    std::string flag;
    std::string named;
  };
  for (const Case& c :
       {Case{"--concurrent-deployment-syncs=0", "--concurrent-deployment-syncs"},
        Case{"--min-resync-period=soon", "--min-resync-period"},
        Case{"--controllers=deployment,nosuchcontroller", "--controllers"},
        Case{"--leader-elect-renew-deadline=20s", "--leader-elect-lease-duration"},
        // Upstream featuregate.Set: an unknown gate is an error.
        Case{"--feature-gates=NoSuchGate=true", "unrecognized feature gate: NoSuchGate"},
        Case{"--no-such-flag=1", "Error: unknown flag: --no-such-flag"},
        Case{"--use_service_account_credentials=true",
             "Error: unknown flag: --use_service_account_credentials"}}) {
    auto r = testenv::RunCommand({KCM_DAEMON_PATH, c.flag}, 20s);
    EXPECT_NE(r.exit_code, 0) << c.flag;
    EXPECT_FALSE(r.timed_out) << c.flag;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << c.flag << ": " << r.err;
  }
}

// --help and --version as upstream's: usage on stdout in sections, exit 0; "Kubernetes v…".
TEST(DaemonE2E, HelpAndVersion) {
  auto help = testenv::RunCommand({KCM_DAEMON_PATH, "--help"}, 20s);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Generic flags:"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--use-service-account-credentials"), std::string::npos);
  EXPECT_EQ(help.out.find("logtostderr"), std::string::npos);
  auto version = testenv::RunCommand({KCM_DAEMON_PATH, "--version"}, 20s);
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("Kubernetes v1.", 0), 0u) << version.out;
}

// kubeadm's flags for controllers we do not run are accepted and reported once; with
// --logging-format=json every line the daemon writes is one JSON object in klog's schema, and it
// leads and becomes ready as usual.
TEST(DaemonE2E, KubeadmFlagsAndJsonLogs) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--controllers=*,bootstrapsigner,tokencleaner", "--allocate-node-cidrs=true",
            "--cluster-cidr=10.244.0.0/16", "--cluster-name=kubernetes",
            "--service-cluster-ip-range=10.96.0.0/12", "--logging-format=json", "--v=2"});
  ASSERT_TRUE(Eventually([&] { return d.Get("/readyz").first == 200; }, 60s)) << d.Log();
  std::string log = d.Log();
  EXPECT_NE(log.find("have no effect\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"flags\":\"--allocate-node-cidrs, --cluster-cidr, --cluster-name, "
                     "--service-cluster-ip-range"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("bootstrapsigner, tokencleaner"), std::string::npos) << log;
  std::istringstream lines(log);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ++n;
    EXPECT_EQ(line.rfind("{\"ts\":", 0), 0u) << line;
    EXPECT_EQ(line.back(), '}') << line;
    EXPECT_NE(line.find("\"caller\":"), std::string::npos) << line;
    EXPECT_NE(line.find("\"msg\":"), std::string::npos) << line;
  }
  EXPECT_GT(n, 5);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// --use-service-account-credentials: the controllers write as kube-system/deployment-controller
// and kube-system/replicaset-controller (tokens from TokenRequest, rights from upstream's bootstrap
// RBAC), not as the controller manager. Its own identity here may read, watch, record events and
// get those tokens, but not create a ReplicaSet or a pod: without the flag the rollout is
// forbidden, with it the rollout completes.
TEST(DaemonE2E, ServiceAccountCredentialsWriteAsEachControllersAccount) {
  KCM_REQUIRE_TESTBED();
  const std::string rbac = R"(apiVersion: v1
kind: ServiceAccount
metadata: {name: kcm-e2e-reader, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kcm-e2e-reader}
rules:
- {apiGroups: [apps], resources: [deployments, replicasets], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [events], verbs: [create, update, patch]}
- {apiGroups: [""], resources: [serviceaccounts], verbs: [get, create]}
- {apiGroups: [""], resources: [serviceaccounts/token], verbs: [create]}
- {apiGroups: [authentication.k8s.io], resources: [tokenreviews], verbs: [create]}
- {apiGroups: [authorization.k8s.io], resources: [subjectaccessreviews], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kcm-e2e-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kcm-e2e-reader}
subjects: [{kind: ServiceAccount, name: kcm-e2e-reader, namespace: kube-system}]
)";
  auto applied = kEnv->Kubectl({"apply", "-f", "-"}, 60s, rbac);
  ASSERT_TRUE(applied.ok()) << applied.Describe();
  auto token =
      kEnv->Kubectl({"-n", "kube-system", "create", "token", "kcm-e2e-reader", "--duration=1h"});
  ASSERT_TRUE(token.ok()) << token.Describe();
  while (!token.out.empty() && std::isspace(static_cast<unsigned char>(token.out.back()))) {
    token.out.pop_back();
  }
  const std::string kubeconfig = testing::TempDir() + "kcm-e2e-reader.kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n"
                            << "    server: " << kEnv->info().server << "\n"
                            << "    certificate-authority: " << kEnv->info().ca_file << "\n"
                            << "users:\n- name: reader\n  user:\n    token: " << token.out << "\n"
                            << "contexts:\n- name: e2e\n  context: {cluster: e2e, user: reader}\n"
                            << "current-context: e2e\n";

  const std::string ns = "e2e-sa-credentials";
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "create", "deployment", "web",
                             "--image=registry.k8s.io/pause:3.10", "--replicas=2"})
                  .ok());
  {
    Daemon own({"--kubeconfig=" + kubeconfig, "--leader-elect=false"});
    ASSERT_TRUE(Eventually([&] { return own.Log().find("forbidden") != std::string::npos; }, 60s))
        << own.Log();
    auto rs = kEnv->Kubectl({"-n", ns, "get", "replicasets", "-o", "name"});
    EXPECT_TRUE(rs.ok() && rs.out.empty()) << rs.out;
    EXPECT_EQ(own.StopWith(SIGTERM), 0) << own.Log();
  }
  Daemon as_accounts(
      {"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--use-service-account-credentials"});
  auto status =
      kEnv->Kubectl({"-n", ns, "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << as_accounts.Log();
  for (const char* sa : {"deployment-controller", "replicaset-controller"}) {
    EXPECT_TRUE(kEnv->Kubectl({"-n", "kube-system", "get", "serviceaccount", sa}).ok()) << sa;
  }
  EXPECT_EQ(as_accounts.StopWith(SIGTERM), 0) << as_accounts.Log();
  kEnv->Kubectl({"delete", "namespace", ns, "--wait=false"});
}

// An unreachable API server at start: a clear, repeated error, no crash; SIGTERM still stops it.
TEST(DaemonE2E, UnreachableApiServerRetriesWithoutCrashing) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--master=https://127.0.0.1:" + std::to_string(testenv::FreeLoopbackPort())});
  ASSERT_GT(d.pid(), 0);
  ASSERT_TRUE(Eventually(
      [&] { return d.Log().find("waiting for the API server") != std::string::npos; }, 30s))
      << d.Log();
  std::this_thread::sleep_for(3s);
  EXPECT_TRUE(d.Running()) << d.Log();
  EXPECT_EQ(d.Get("/healthz").first, 200);  // It serves health while it waits.
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// S1, M1-M4: /metrics passes promtool; workqueue and rest_client series move during a rollout;
// readiness; a graceful stop releases the Lease and exits 0.
TEST(DaemonE2E, MetricsPassPromtoolAndMoveDuringRollout) {
  KCM_REQUIRE_TESTBED();
  const std::string& admin = kEnv->info().admin_token;
  Daemon d({});
  ASSERT_TRUE(Eventually([&] { return d.Get("/readyz").first == 200; }, 60s)) << d.Log();
  EXPECT_EQ(d.Get("/metrics").first, 401);  // No token.

  auto before = d.Get("/metrics", admin);
  ASSERT_EQ(before.first, 200);
  auto promtool = testenv::RunCommand({"promtool", "check", "metrics"}, 30s, before.second);
  EXPECT_TRUE(promtool.ok()) << promtool.Describe() << promtool.out;
  EXPECT_EQ(
      Sample(before.second, "leader_election_master_status{name=\"kube-controller-manager-cpp\"}"),
      1);

  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "e2e-metrics"}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"-n", "e2e-metrics", "create", "deployment", "web",
                             "--image=registry.k8s.io/pause:3.10", "--replicas=3"})
                  .ok());
  auto status = kEnv->Kubectl(
      {"-n", "e2e-metrics", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << d.Log();
  ASSERT_TRUE(kEnv->Kubectl({"-n", "e2e-metrics", "set", "image", "deployment/web",
                             "pause=registry.k8s.io/pause:3.9"})
                  .ok());
  status = kEnv->Kubectl(
      {"-n", "e2e-metrics", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  ASSERT_TRUE(status.ok()) << status.Describe() << d.Log();

  auto after = d.Get("/metrics", admin);
  ASSERT_EQ(after.first, 200);
  for (const char* series :
       {"workqueue_adds_total{name=\"deployment\"}", "workqueue_adds_total{name=\"replicaset\"}",
        "controller_runtime_reconcile_total{controller=\"deployment\",result=\"success\"}",
        "controller_runtime_reconcile_total{controller=\"replicaset\",result=\"success\"}"}) {
    EXPECT_GT(Sample(after.second, series), Sample(before.second, series)) << series;
  }
  // rest_client_requests_total: at least one POST (pods, replicasets) was answered 201.
  EXPECT_NE(after.second.find("rest_client_requests_total{code=\"201\""), std::string::npos);
  EXPECT_GT(Sample(after.second, "process_resident_memory_bytes"), 1e6);

  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
  EXPECT_EQ(LeaseHolder(), "");  // L3: released on graceful shutdown.
}

// L2-L4 with two replicas: the standby serves /healthz but is not ready and starts no controller;
// when the leader is killed (-9) the standby takes over within lease duration + retry period.
TEST(DaemonE2E, StandbyTakesOverWhenLeaderIsKilled) {
  KCM_REQUIRE_TESTBED();
  const std::vector<std::string> timing = {"--leader-elect-lease-duration=6s",
                                           "--leader-elect-renew-deadline=4s",
                                           "--leader-elect-retry-period=1s"};
  Daemon first(timing);
  ASSERT_TRUE(Eventually([&] { return first.Get("/readyz").first == 200; }, 60s)) << first.Log();
  Daemon second(timing);
  ASSERT_TRUE(Eventually([&] { return second.Get("/healthz").first == 200; }, 30s));
  std::this_thread::sleep_for(3s);
  EXPECT_NE(second.Get("/readyz").first, 200);  // Standby: healthy, not ready.
  // klog's structured line; the leader logged it, the standby must not have.
  const std::string starting = R"("Starting controller" controller="deployment")";
  EXPECT_NE(first.Log().find(starting), std::string::npos) << first.Log();
  EXPECT_EQ(second.Log().find(starting), std::string::npos);

  auto killed_at = std::chrono::steady_clock::now();
  EXPECT_EQ(first.StopWith(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(Eventually([&] { return second.Get("/readyz").first == 200; }, 30s)) << second.Log();
  auto took = std::chrono::steady_clock::now() - killed_at;
  // Bound: lease duration (6 s) + jittered retry (≤ 2.2 s) + cache sync; generous for 2 cores.
  EXPECT_LT(took, 20s) << std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  EXPECT_NE(second.Log().find("successfully acquired lease"), std::string::npos);

  // The new leader manages: a ReplicaSet gets its pods.
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", "e2e-failover"}).ok());
  ASSERT_TRUE(kEnv->Kubectl({"-n", "e2e-failover", "create", "deployment", "web",
                             "--image=registry.k8s.io/pause:3.10", "--replicas=2"})
                  .ok());
  auto status = kEnv->Kubectl(
      {"-n", "e2e-failover", "rollout", "status", "deployment/web", "--timeout=120s"}, 150s);
  EXPECT_TRUE(status.ok()) << status.Describe() << second.Log();
  EXPECT_EQ(second.StopWith(SIGTERM), 0);
}

}  // namespace
}  // namespace kcm::e2e
