// The kube-controller-manager binary driven as an operator would (issue 7): bad flags, an
// unreachable API server, /metrics checked by promtool and moving during a rollout, readiness,
// graceful stop, and leader failover between two replicas. Each test gets a private testbed: the
// daemon watches every namespace, so it must not share one with in-process controller tests.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "test/integration/framework/testenv.h"

extern char** environ;

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 2});

bool Eventually(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return done();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One daemon process, output in its own log file; killed (SIGKILL) if still running at the end.
class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extra_args, bool with_kubeconfig = true)
      : port_(FreePort()),
        log_(testing::TempDir() + "kcm-e2e-" + std::to_string(::getpid()) + "-" +
             std::to_string(port_) + ".log") {
    std::vector<std::string> args = {KCM_DAEMON_PATH};
    if (with_kubeconfig) args.push_back("--kubeconfig=" + kEnv->info().kcm_kubeconfig);
    args.push_back("--bind-address=127.0.0.1");
    args.push_back("--secure-port=" + std::to_string(port_));
    args.push_back("--leader-elect-resource-name=kube-controller-manager-cpp");
    for (auto& a : extra_args) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Daemon() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  bool Running() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      exit_status_ = status;
      return false;
    }
    return true;
  }
  // Sends sig and waits (bounded) for the exit; returns the exit code, -1 if still running.
  int StopWith(int sig, std::chrono::seconds limit = 40s) {
    ::kill(pid_, sig);
    if (!Eventually([&] { return !Running(); }, limit)) return -1;
    return WIFEXITED(exit_status_) ? WEXITSTATUS(exit_status_) : 128 + WTERMSIG(exit_status_);
  }
  std::string Log() const { return ReadFile(log_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  // GET https://127.0.0.1:<port><path> with an optional bearer token; {code, body}.
  std::pair<int, std::string> Get(const std::string& path, const std::string& token = "") const {
    std::vector<std::string> argv = {"curl", "-sk", "-o", "-", "-w", "\n%{http_code}"};
    if (!token.empty()) {
      argv.push_back("-H");
      argv.push_back("Authorization: Bearer " + token);
    }
    argv.push_back("https://127.0.0.1:" + std::to_string(port_) + path);
    auto r = testenv::RunCommand(argv, 20s);
    size_t nl = r.out.rfind('\n');
    if (!r.ok() || nl == std::string::npos) return {0, r.out};
    return {std::atoi(r.out.c_str() + nl + 1), r.out.substr(0, nl)};
  }

 private:
  int port_;
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_status_ = 0;
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
  for (const Case& c : {Case{"--concurrent-deployment-syncs=0", "--concurrent-deployment-syncs"},
                        Case{"--min-resync-period=soon", "--min-resync-period"},
                        Case{"--controllers=deployment,cronjob", "--controllers"},
                        Case{"--leader-elect-renew-deadline=20s", "--leader-elect-lease-duration"},
                        Case{"--no-such-flag=1", "no_such_flag"}}) {
    auto r = testenv::RunCommand({KCM_DAEMON_PATH, c.flag}, 20s);
    EXPECT_NE(r.exit_code, 0) << c.flag;
    EXPECT_FALSE(r.timed_out) << c.flag;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << c.flag << ": " << r.err;
  }
}

// An unreachable API server at start: a clear, repeated error, no crash; SIGTERM still stops it.
TEST(DaemonE2E, UnreachableApiServerRetriesWithoutCrashing) {
  KCM_REQUIRE_TESTBED();
  Daemon d({"--master=https://127.0.0.1:" + std::to_string(FreePort())});
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
  EXPECT_EQ(second.Log().find("Starting \"deployment\""), std::string::npos);

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
