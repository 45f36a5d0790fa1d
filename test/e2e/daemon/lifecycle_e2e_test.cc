// The daemon's lifecycle against a private testbed: fencing (no pod create reaches the API server
// after the daemon logged "leaderelection lost"), and controllers that cannot start (their caches
// never sync): with --controller-cache-sync-timeout the process exits 1 naming the controller;
// without it (upstream's behaviour) it waits, leading but not ready, and still stops on SIGTERM.
//
// The testbed runs with KCM_TESTBED_AUDIT=1: kube-apiserver's audit log records when each pod
// create reached it (requestReceivedTimestamp, microseconds), independently of our own log.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "test/e2e/daemon/daemon_e2e_util.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using testenv::Eventually;

// Before the environment's SetUp runs `hack/testbed up`.
const bool kAuditOn = [] { return ::setenv("KCM_TESTBED_AUDIT", "1", 1) == 0; }();
auto* const kEnv = testenv::RegisterTestbed({.nodes = 2});

constexpr char kLease[] = "kube-controller-manager-cpp";

class Daemon {
 public:
  Daemon(std::string kubeconfig, std::vector<std::string> extra)
      : port_(testenv::FreeLoopbackPort()),
        process_(Args(port_, std::move(kubeconfig), std::move(extra)), LogPath(port_)) {}

  bool Running() { return process_.Running(); }
  int StopWith(int sig, std::chrono::seconds limit = 40s) { return process_.StopWith(sig, limit); }
  std::string Log() const { return process_.Log(); }
  std::pair<int, std::string> Get(const std::string& path) const {
    return testenv::HttpsGet(port_, path);
  }

 private:
  static std::vector<std::string> Args(int port, std::string kubeconfig,
                                       std::vector<std::string> extra) {
    // KCM_E2E_DAEMON runs another build of the daemon (e.g. to show a test fails without a fix).
    const char* daemon = std::getenv("KCM_E2E_DAEMON");
    std::vector<std::string> args = {daemon != nullptr ? daemon : KCM_DAEMON_PATH,
                                     "--kubeconfig=" + kubeconfig,
                                     "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port),
                                     std::string("--leader-elect-resource-name=") + kLease,
                                     "--leader-elect-lease-duration=6s",
                                     "--leader-elect-renew-deadline=4s",
                                     "--leader-elect-retry-period=1s"};
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }
  static std::string LogPath(int port) {
    return testing::TempDir() + "kcm-lifecycle-" + std::to_string(::getpid()) + "-" +
           std::to_string(port) + ".log";
  }

  int port_;
  testenv::DaemonProcess process_;
};

// The string value of "key":"..." in one JSON line ("" when absent).
std::string JsonString(const std::string& line, const std::string& key) {
  const std::string needle = "\"" + key + "\":\"";
  const size_t at = line.find(needle);
  if (at == std::string::npos) return "";
  const size_t start = at + needle.size();
  const size_t end = line.find('"', start);
  return end == std::string::npos ? "" : line.substr(start, end - start);
}

struct AuditedCreate {
  int64_t received_us;
  bool created;  // answered 201
};

// Pod creates in `ns` by the controller-manager user, from the API server's audit log.
std::vector<AuditedCreate> PodCreates(const std::string& ns) {
  std::ifstream in(kEnv->info().dir + "/logs/audit.log");
  std::vector<AuditedCreate> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"verb\":\"create\"") == std::string::npos) continue;
    if (line.find("\"resource\":\"pods\"") == std::string::npos) continue;
    if (line.find("\"namespace\":\"" + ns + "\"") == std::string::npos) continue;
    if (line.find("\"username\":\"" + kEnv->info().kcm_user + "\"") == std::string::npos) continue;
    auto t = Rfc3339Micro(JsonString(line, "requestReceivedTimestamp"));
    if (!t) continue;
    out.push_back({*t, line.find("\"code\":201") != std::string::npos});
  }
  return out;
}

// A Lease left by an earlier test (another holder, long duration) would delay acquiring.
void DeleteLease() {
  kEnv->Kubectl({"-n", "kube-system", "delete", "lease", kLease, "--ignore-not-found"});
}

int PodCount(const std::string& ns) {
  auto r = kEnv->Kubectl({"-n", ns, "get", "pods", "-o", "name"});
  if (!r.ok()) return -1;
  return static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
}

// A 500-pod ReplicaSet scale-up made slow (5 QPS per controller client, burst 1), so a test can
// act on the daemon mid-way.
const std::vector<std::string> kSlowReplicaSetFlags = {"--controllers=replicaset",
                                                       "--kube-api-qps=5", "--kube-api-burst=1"};

// Waits until `d` (started with kSlowReplicaSetFlags) is ready, applies the 500-replica
// ReplicaSet in `ns` and waits for its first 10 pods.
void StartSlowScaleUp(Daemon& d, const std::string& ns) {
  ASSERT_TRUE(Eventually([&] { return d.Get("/readyz").first == 200; }, 60s)) << d.Log();
  auto applied = kEnv->Kubectl({"apply", "-f", "-"}, 60s, ReplicaSetYaml(ns, 500));
  ASSERT_TRUE(applied.ok()) << applied.Describe();
  ASSERT_TRUE(Eventually([&] { return PodCount(ns) >= 10; }, 60s, 200ms)) << d.Log();
}

// The pod creates audited in `ns`, split at `t_us` (a log line's time) with 100 ms allowed for a
// request already in transit on loopback: how many succeeded before, and the offsets (µs) of
// every one received after.
struct CreatesSplit {
  int before = 0;
  std::vector<int64_t> after_us;
};
CreatesSplit SplitCreatesAt(const std::string& ns, int64_t t_us) {
  std::this_thread::sleep_for(2s);  // let the API server finish writing its audit lines
  CreatesSplit out;
  for (const auto& c : PodCreates(ns)) {
    if (c.received_us <= t_us + 100000) {
      out.before += c.created ? 1 : 0;
    } else {
      out.after_us.push_back(c.received_us - t_us);
    }
  }
  return out;
}

// Fencing: a 500-pod scale-up runs slowly (5 QPS per controller client); an admin hands the
// Lease to someone else mid-way. The daemon notices at its next renewal, logs "leaderelection
// lost" and exits 1 — and the API server's audit log shows no pod create received after that
// line (beyond 100 ms of loopback transit for a request already sent; creates are >= 200 ms
// apart at 5 QPS), while creates did happen before it.
TEST(LifecycleE2E, NoPodCreateAfterLeaderElectionLost) {
  KCM_REQUIRE_TESTBED();
  ASSERT_TRUE(kAuditOn);
  const std::string ns = "e2e-fence";
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
  DeleteLease();
  Daemon d(kEnv->info().kcm_kubeconfig, kSlowReplicaSetFlags);
  ASSERT_NO_FATAL_FAILURE(StartSlowScaleUp(d, ns));

  auto patched =
      kEnv->Kubectl({"-n", "kube-system", "patch", "lease", kLease, "--type=merge", "-p",
                     R"({"spec":{"holderIdentity":"e2e-usurper","leaseDurationSeconds":60}})"});
  ASSERT_TRUE(patched.ok()) << patched.Describe();
  EXPECT_EQ(d.StopWith(0, 30s), 1) << "the daemon should exit 1 on its own after losing the lease\n"
                                   << d.Log();
  if (d.Running()) d.StopWith(SIGKILL);

  const std::string log = d.Log();
  std::optional<int64_t> lost_at = LogLineTime(log, "leaderelection lost");
  ASSERT_TRUE(lost_at.has_value()) << log;
  EXPECT_NE(log.find("the lease is held by e2e-usurper"), std::string::npos) << log;

  const auto [before, after_us] = SplitCreatesAt(ns, *lost_at);
  std::cout << "[lifecycle] pod creates before \"leaderelection lost\": " << before
            << ", after: " << after_us.size() << ", pods: " << PodCount(ns) << std::endl;
  EXPECT_GE(before, 10) << "creates did happen before the loss";
  EXPECT_TRUE(after_us.empty()) << after_us.size() << " pod creates reached the API server after "
                                << "\"leaderelection lost\"; first +" << after_us.front() / 1000
                                << " ms";
  EXPECT_LT(PodCount(ns), 500);  // the scale-up was cut short, not finished
  kEnv->Kubectl({"-n", ns, "scale", "replicaset", "big", "--replicas=0"});
  DeleteLease();
}

// SIGTERM during a slow 500-pod scale-up: the slow start stops issuing creates at once (none
// reaches the API server after the "Received signal" line, beyond 100 ms of transit), the
// in-flight sync ends, the Lease is released and the process exits 0 on its own — not through
// the 25 s forced exit (exit 1) it needed while slow starts ignored the stop.
TEST(LifecycleE2E, SigtermStopsASlowStartAndExitsCleanly) {
  KCM_REQUIRE_TESTBED();
  const std::string ns = "e2e-sigterm";
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
  DeleteLease();
  Daemon d(kEnv->info().kcm_kubeconfig, kSlowReplicaSetFlags);
  ASSERT_NO_FATAL_FAILURE(StartSlowScaleUp(d, ns));
  EXPECT_EQ(d.StopWith(SIGTERM, 40s), 0) << d.Log();
  if (d.Running()) d.StopWith(SIGKILL);
  const std::string log = d.Log();
  std::optional<int64_t> signalled_at = LogLineTime(log, "Received signal");
  ASSERT_TRUE(signalled_at.has_value()) << log;
  EXPECT_EQ(log.find("graceful shutdown took longer"), std::string::npos) << log;

  const auto [before, after_us] = SplitCreatesAt(ns, *signalled_at);
  std::cout << "[lifecycle] pod creates before SIGTERM: " << before
            << ", after: " << after_us.size() << std::endl;
  EXPECT_GE(before, 10);
  EXPECT_TRUE(after_us.empty());
  auto holder = kEnv->Kubectl(
      {"-n", "kube-system", "get", "lease", kLease, "-o", "jsonpath={.spec.holderIdentity}"});
  EXPECT_TRUE(holder.ok());
  EXPECT_EQ(holder.out, "");  // released on the graceful stop
  kEnv->Kubectl({"-n", ns, "scale", "replicaset", "big", "--replicas=0"});
}

// A user whose rights miss pods entirely: both controllers' pod informers never sync.
std::string NoPodsKubeconfig() {
  const std::string sa = "kcm-e2e-nopods";
  const std::string rbac = R"(apiVersion: v1
kind: ServiceAccount
metadata:
  name: kcm-e2e-nopods
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kcm-e2e-nopods
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "create", "update"]
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch", "update"]
- apiGroups: ["apps"]
  resources: ["deployments", "replicasets"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["apps"]
  resources: ["deployments/status", "replicasets/status"]
  verbs: ["update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kcm-e2e-nopods
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kcm-e2e-nopods
subjects:
- kind: ServiceAccount
  name: kcm-e2e-nopods
  namespace: kube-system
)";
  auto applied = kEnv->Kubectl({"apply", "-f", "-"}, 60s, rbac);
  if (!applied.ok()) return "";
  auto token = kEnv->Kubectl({"-n", "kube-system", "create", "token", sa, "--duration=1h"});
  if (!token.ok()) return "";
  return WriteTokenKubeconfig(
      testing::TempDir() + "kcm-e2e-nopods-" + std::to_string(::getpid()) + ".kubeconfig",
      kEnv->info().server, kEnv->info().ca_file, token.out);
}

// With --controller-cache-sync-timeout a controller whose caches never sync fails, and the
// process does not stay leader without it: it exits 1 naming the controller and the cause, and
// releases the Lease on the way out.
TEST(LifecycleE2E, ControllerThatCannotStartEndsTheProcess) {
  KCM_REQUIRE_TESTBED();
  const std::string kubeconfig = NoPodsKubeconfig();
  ASSERT_FALSE(kubeconfig.empty());
  DeleteLease();
  Daemon d(kubeconfig, {"--controller-cache-sync-timeout=5s"});
  ASSERT_TRUE(Eventually(
      [&] { return d.Log().find("successfully acquired lease") != std::string::npos; }, 60s))
      << d.Log();
  EXPECT_NE(d.Get("/readyz").first, 200);
  EXPECT_EQ(d.StopWith(0, 60s), 1) << d.Log();
  if (d.Running()) d.StopWith(SIGKILL);
  const std::string log = d.Log();
  EXPECT_NE(log.find("timed out waiting for caches to sync"), std::string::npos) << log;
  // One line: "Controller failed" err="..." controller="replicaset" (or "deployment").
  auto failed_line = [&log](const std::string& controller) {
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("\"Controller failed\"") != std::string::npos &&
          line.find("controller=\"" + controller + "\"") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(failed_line("replicaset") || failed_line("deployment")) << log;
  auto holder = kEnv->Kubectl(
      {"-n", "kube-system", "get", "lease", kLease, "-o", "jsonpath={.spec.holderIdentity}"});
  EXPECT_TRUE(holder.ok());
  EXPECT_EQ(holder.out, "");
}

// Without the flag (the default, as upstream): the controllers wait for their caches until
// stopped; meanwhile the process leads but /readyz is not 200 and says why; SIGTERM ends it
// cleanly (the cache wait ends on stop).
TEST(LifecycleE2E, UnsyncedControllersWaitNotReadyUntilStopped) {
  KCM_REQUIRE_TESTBED();
  const std::string kubeconfig = NoPodsKubeconfig();
  ASSERT_FALSE(kubeconfig.empty());
  DeleteLease();
  Daemon d(kubeconfig, {});
  ASSERT_TRUE(Eventually(
      [&] { return d.Log().find("successfully acquired lease") != std::string::npos; }, 60s))
      << d.Log();
  std::this_thread::sleep_for(10s);  // twice the failing test's timeout
  ASSERT_TRUE(d.Running()) << d.Log();
  auto [code, body] = d.Get("/readyz?verbose");
  EXPECT_NE(code, 200) << body;
  EXPECT_NE(body.find("informer-sync failed"), std::string::npos) << body;
  EXPECT_EQ(body.find("leader failed"), std::string::npos) << body;  // it does lead
  EXPECT_EQ(d.StopWith(SIGTERM, 30s), 0) << d.Log();
}

}  // namespace
}  // namespace kcm::e2e
