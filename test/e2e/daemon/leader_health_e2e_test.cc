// /healthz's leaderElection check telling the truth when the API server stops answering: the
// daemon binary leads (or, with --sharding=namespace, holds its member Lease) on a private
// testbed, the testbed's kube-apiserver is frozen (SIGSTOP), and /healthz must fail before the
// renew deadline ends the process — where upstream v1.37.2 keeps answering ok while the API
// server is unreachable (its check waits for lease duration + 20 s, after the process has
// already exited; a standby answers ok throughout, as ours does).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"
#include "test/unit/server/tls_client.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using server::testing::HttpsGet;
using testenv::Eventually;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 1});

// Freezes the testbed's kube-apiserver (its pid from hack/testbed's pids/ file) until destroyed:
// connections stay open and requests hang, as behind a partition.
class FrozenApiServer {
 public:
  FrozenApiServer() {
    std::ifstream in(kEnv->info().dir + "/pids/kube-apiserver");
    in >> pid_;
    if (pid_ > 0 && kill(pid_, SIGSTOP) != 0) pid_ = -1;
  }
  ~FrozenApiServer() {
    if (pid_ > 0) kill(pid_, SIGCONT);
  }
  FrozenApiServer(const FrozenApiServer&) = delete;
  FrozenApiServer& operator=(const FrozenApiServer&) = delete;
  bool frozen() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

std::string LogPath(int port) {
  return ::testing::TempDir() + "kcm-leader-health-e2e-" + std::to_string(::getpid()) + "-" +
         std::to_string(port) + ".log";
}

// Leads (or joins), then loses the API server: /healthz fails with the leaderElection check
// 7 s after the last renewal (a retry period and half the renew deadline), before the renew
// deadline makes the daemon exit 1 (12 s after it: the deadline runs from the next attempt);
// /metrics/slis records the failed check.
void ExpectHealthzFailsWhenRenewalsStop(const std::vector<std::string>& extra, const char* held) {
  const int port = testenv::FreeLoopbackPort();
  std::vector<std::string> args = {KCM_DAEMON_PATH,
                                   "--kubeconfig=" + kEnv->info().admin_kubeconfig,
                                   "--bind-address=127.0.0.1",
                                   "--secure-port=" + std::to_string(port),
                                   "--leader-elect-resource-name=kcm-leader-health-e2e",
                                   "--authorization-always-allow-paths=/healthz,/metrics/slis"};
  args.insert(args.end(), extra.begin(), extra.end());
  testenv::DaemonProcess d(args, LogPath(port));
  ASSERT_TRUE(Eventually([&] { return d.Log().find(held) != std::string::npos; }, 60s)) << d.Log();
  ASSERT_EQ(HttpsGet(port, "/healthz").code, 200) << d.Log();

  FrozenApiServer frozen;
  ASSERT_TRUE(frozen.frozen());
  const auto start = std::chrono::steady_clock::now();
  std::string body;
  const bool failed = Eventually(
      [&] {
        auto r = HttpsGet(port, "/healthz?verbose", {.timeout_ms = 2000});
        body = r.body;
        return r.code == 500;
      },
      12s, 200ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(failed) << body << d.Log();
  EXPECT_LT(took, 10s) << "at the renew deadline the daemon gives up anyway";
  EXPECT_NE(body.find("[-]leaderElection failed: the leader cannot renew lease"), std::string::npos)
      << body;
  EXPECT_NE(body.find("[+]ping ok"), std::string::npos) << body;
  auto slis = HttpsGet(port, "/metrics/slis");
  EXPECT_NE(slis.body.find("kubernetes_healthcheck{name=\"leaderElection\",type=\"healthz\"} 0"),
            std::string::npos)
      << slis.body;
  // The renew deadline still ends the process (a lost lease exits 1, as before).
  EXPECT_EQ(d.StopWith(0, 30s), 1) << d.Log();
}

TEST(LeaderHealthE2E, HealthzFailsWhenTheLeaderCannotRenew) {
  KCM_REQUIRE_TESTBED();
  ExpectHealthzFailsWhenRenewalsStop({}, "successfully acquired lease");
}

TEST(LeaderHealthE2E, HealthzFailsWhenTheMemberLeaseCannotBeRenewed) {
  KCM_REQUIRE_TESTBED();
  ExpectHealthzFailsWhenRenewalsStop({"--sharding=namespace"}, "\"Joined\" member=");
}

// A standby that never led answers ok while the API server is away, as upstream's: restarting
// it would not bring the API server back.
TEST(LeaderHealthE2E, StandbyStaysHealthy) {
  KCM_REQUIRE_TESTBED();
  // The Lease is held by someone else for an hour: the daemon stands by.
  ASSERT_TRUE(kEnv->Kubectl({"apply", "-f", "-"}, 30s,
                            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n"
                            "  name: kcm-leader-health-standby\n  namespace: kube-system\n"
                            "spec:\n  holderIdentity: e2e-other\n  leaseDurationSeconds: 3600\n")
                  .ok());
  const int port = testenv::FreeLoopbackPort();
  testenv::DaemonProcess standby(
      {KCM_DAEMON_PATH, "--kubeconfig=" + kEnv->info().admin_kubeconfig, "--bind-address=127.0.0.1",
       "--secure-port=" + std::to_string(port),
       "--leader-elect-resource-name=kcm-leader-health-standby"},
      LogPath(port));
  ASSERT_TRUE(Eventually(
      [&] { return standby.Log().find("attempting to acquire leader lease") != std::string::npos; },
      30s))
      << standby.Log();
  FrozenApiServer frozen;
  ASSERT_TRUE(frozen.frozen());
  std::this_thread::sleep_for(8s);
  EXPECT_EQ(HttpsGet(port, "/healthz").code, 200) << standby.Log();
  EXPECT_EQ(standby.StopWith(SIGTERM), 0) << standby.Log();
}

}  // namespace
}  // namespace kcm::e2e
