// The kube-controller-manager binary's HTTPS endpoint under hostile clients, without an API
// server (the daemon serves health while it waits for one): TLS hang-ups that used to kill it
// with SIGPIPE, slow and idle connections that used to starve /healthz, a TokenReview that never
// answers, and the TLS 1.2 CBC suite `openssl s_client` used to get. "Within 1 s" bounds are
// liveness bounds, not speed targets.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"
#include "test/unit/server/tls_client.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using server::testing::ConnectTcp;
using server::testing::HttpsGet;
using server::testing::TlsClient;
using testenv::Eventually;

// Our daemon pointed at an API server address nobody listens on, serving on a free port.
class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extra_args)
      : port_(testenv::FreeLoopbackPort()),
        process_(Args(port_, std::move(extra_args)), LogPath()) {
    serving_ = Eventually([&] { return HttpsGet(port_, "/healthz").code == 200; }, 20s);
  }
  bool serving() const { return serving_; }
  bool Running() { return process_.Running(); }
  int port() const { return port_; }
  std::string Log() const { return process_.Log(); }
  int StopWith(int sig) { return process_.StopWith(sig); }

 private:
  static std::vector<std::string> Args(int port, std::vector<std::string> extra) {
    std::vector<std::string> args = {
        KCM_DAEMON_PATH,
        "--master=https://127.0.0.1:" + std::to_string(testenv::FreeLoopbackPort()),
        "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(port)};
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }
  std::string LogPath() const {
    return ::testing::TempDir() + "kcm-serving-e2e-" + std::to_string(::getpid()) + "-" +
           std::to_string(port_) + ".log";
  }

  int port_;
  testenv::DaemonProcess process_;
  bool serving_ = false;
};

void ExpectHealthzPrompt(int port, int times = 3) {
  for (int i = 0; i < times; ++i) {
    auto r = HttpsGet(port, "/healthz", {.timeout_ms = 5000});
    EXPECT_EQ(r.code, 200) << r.body;
    EXPECT_LT(r.took, 1s) << r.took.count() << " ms";
  }
}

// 100 clients send a ClientHello and hang up (half with an RST): the old daemon died of SIGPIPE
// (exit 141) within a few of them.
TEST(ServingE2E, HandshakeHangUpsDoNotKillTheDaemon) {
  Daemon d({});
  ASSERT_TRUE(d.serving()) << d.Log();
  const std::string hello = server::testing::ClientHelloBytes();
  for (int i = 0; i < 100; ++i) {
    int fd = ConnectTcp(d.port());
    ASSERT_GE(fd, 0);
    send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    if (i % 2 == 0) {
      linger l{1, 0};
      setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    }
    close(fd);
  }
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(d.Running()) << d.Log();
  ExpectHealthzPrompt(d.port());
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// 16 clients dribbling one header byte every 2 s plus 200 connections that never start TLS:
// /healthz stays prompt, and the dribblers are cut off at the daemon's 10 s request deadline.
TEST(ServingE2E, SlowAndIdleClientsDoNotStarveHealthz) {
  Daemon d({});
  ASSERT_TRUE(d.serving()) << d.Log();
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    int fd = ConnectTcp(d.port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  constexpr int kSlow = 16;
  std::atomic<int> connected{0}, cut_off{0};
  std::vector<std::thread> slow;
  for (int i = 0; i < kSlow; ++i) {
    slow.emplace_back([&] {
      TlsClient c(d.port(), {});
      if (!c.handshake_ok()) return;
      ++connected;
      const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
      for (size_t b = 0; b < 10; ++b) {  // 10 x 2 s: well past the 10 s deadline
        if (!c.Write(head.substr(b, 1)) || c.WaitClosed(2s)) {
          ++cut_off;
          return;
        }
      }
    });
  }
  Eventually([&] { return connected == kSlow; }, 10s);
  EXPECT_EQ(connected.load(), kSlow);
  ExpectHealthzPrompt(d.port(), 5);
  for (auto& t : slow) t.join();
  EXPECT_EQ(cut_off.load(), kSlow);
  for (int fd : idle) close(fd);
  EXPECT_TRUE(d.Running()) << d.Log();
  ExpectHealthzPrompt(d.port());
}

// --authentication-kubeconfig pointing at a server that accepts TCP and never answers: /healthz
// stays prompt while 8 scrapers (more than the worker pool) wait; each /metrics ends in 401 once
// the delegated client's 10 s timeout passes.
TEST(ServingE2E, HungTokenReviewDoesNotBlockHealthz) {
  int silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(silent, 64), 0);  // The kernel completes TCP handshakes; nobody answers.
  getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string kubeconfig =
      ::testing::TempDir() + "kcm-silent-" + std::to_string(::getpid()) + ".kubeconfig";
  std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: silent\n"
                               "  cluster:\n    server: https://127.0.0.1:"
                            << ntohs(addr.sin_port)
                            << "\n    insecure-skip-tls-verify: true\n"
                               "users:\n- name: u\n  user:\n    token: x\n"
                               "contexts:\n- name: c\n  context:\n    cluster: silent\n"
                               "    user: u\ncurrent-context: c\n";

  Daemon d({"--authentication-kubeconfig=" + kubeconfig});
  ASSERT_TRUE(d.serving()) << d.Log();
  constexpr int kScrapers = 8;
  std::vector<server::testing::HttpsResponse> results(kScrapers);
  std::vector<std::thread> scrapers;
  for (int i = 0; i < kScrapers; ++i) {
    scrapers.emplace_back([&, i] {
      // Two rounds of the 4 workers, each round up to the 10 s timeout.
      results[i] = HttpsGet(d.port(), "/metrics",
                            {.token = "token-" + std::to_string(i), .timeout_ms = 40000});
    });
  }
  std::this_thread::sleep_for(500ms);
  ExpectHealthzPrompt(d.port(), 5);
  for (auto& t : scrapers) t.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.code, 401) << r.body;
    EXPECT_GE(r.took, 9s);  // The review was waited for until the client's timeout.
  }
  EXPECT_NE(d.Log().find("TokenReview failed"), std::string::npos);
  close(silent);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
  std::remove(kubeconfig.c_str());
}

// `openssl s_client -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA` (CBC, SHA-1 MAC) is refused; an AEAD
// suite is agreed; --tls-min-version=VersionTLS13 refuses TLS 1.2 altogether.
TEST(ServingE2E, Tls12CbcSuiteRefused) {
  Daemon d({});
  ASSERT_TRUE(d.serving()) << d.Log();
  const std::string connect = "127.0.0.1:" + std::to_string(d.port());
  auto cbc = testenv::RunCommand(
      {"openssl", "s_client", "-connect", connect, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"},
      20s, "");
  EXPECT_NE(cbc.exit_code, 0) << cbc.out;
  auto gcm = testenv::RunCommand({"openssl", "s_client", "-connect", connect, "-tls1_2", "-cipher",
                                  "ECDHE-ECDSA-AES128-GCM-SHA256"},
                                 20s, "");
  EXPECT_EQ(gcm.exit_code, 0) << gcm.Describe();
  EXPECT_NE(gcm.out.find("ECDHE-ECDSA-AES128-GCM-SHA256"), std::string::npos) << gcm.out;

  Daemon tls13({"--tls-min-version=VersionTLS13"});
  ASSERT_TRUE(tls13.serving()) << tls13.Log();
  auto v12 = testenv::RunCommand(
      {"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(tls13.port()), "-tls1_2"},
      20s, "");
  EXPECT_NE(v12.exit_code, 0) << v12.out;
}

TEST(ServingE2E, BadServingFlagsExitNamingTheFlag) {
  for (const auto& [flag, named] : std::vector<std::pair<std::string, std::string>>{
           {"--tls-min-version=VersionTLS10", "--tls-min-version"},
           {"--tls-cipher-suites=TLS_FOO", "--tls-cipher-suites"},
           {"--client-ca-file=/nonexistent/ca.crt", "--client-ca-file"},
           {"--requestheader-client-ca-file=/nonexistent/ca.crt",
            "--requestheader-client-ca-file"}}) {
    auto r = testenv::RunCommand({KCM_DAEMON_PATH, flag}, 20s);
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_NE(r.err.find(named), std::string::npos) << flag << ": " << r.err;
  }
}

}  // namespace
}  // namespace kcm::e2e
