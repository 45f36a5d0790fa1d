// The binary's /metrics authentication against a real API server (private testbed): a flood of
// bad bearer tokens (each a real TokenReview), x509 client certificates (--client-ca-file) and a
// front proxy's request headers (--requestheader-*), each then authorized by a real
// SubjectAccessReview.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"
#include "test/unit/server/tls_client.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using server::testing::HttpsGet;
using server::testing::TestCerts;
using testenv::Eventually;

auto* const kEnv = testenv::RegisterTestbed({.nodes = 1});

class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extra_args)
      : port_(testenv::FreeLoopbackPort()),
        process_(Args(port_, std::move(extra_args)), LogPath()) {
    serving_ = Eventually([&] { return HttpsGet(port_, "/healthz").code == 200; }, 30s);
  }
  bool serving() const { return serving_; }
  int port() const { return port_; }
  std::string Log() const { return process_.Log(); }
  int StopWith(int sig) { return process_.StopWith(sig); }

 private:
  static std::vector<std::string> Args(int port, std::vector<std::string> extra) {
    std::vector<std::string> args = {KCM_DAEMON_PATH, "--kubeconfig=" + kEnv->info().kcm_kubeconfig,
                                     "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port),
                                     "--leader-elect-resource-name=kcm-serving-auth-e2e"};
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }
  std::string LogPath() const {
    return ::testing::TempDir() + "kcm-serving-auth-e2e-" + std::to_string(::getpid()) + "-" +
           std::to_string(port_) + ".log";
  }

  int port_;
  testenv::DaemonProcess process_;
  bool serving_ = false;
};

// 100 distinct bad tokens from 50 clients at once: every one is a TokenReview the API server
// rejects → 401 each; /healthz answers within 1 s throughout (the old server, whose 4 workers
// queued health checks behind the reviews, took seconds).
TEST(ServingAuthE2E, BadTokensGet401AndHealthzStaysPrompt) {
  KCM_REQUIRE_TESTBED();
  Daemon d({});
  ASSERT_TRUE(d.serving()) << d.Log();
  std::atomic<int> unauthorized{0}, other{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 50; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 2; ++i) {
        auto r = HttpsGet(d.port(), "/metrics",
                          {.token = "bad-" + std::to_string(t) + "-" + std::to_string(i)});
        (r.code == 401 ? unauthorized : other)++;
      }
    });
  }
  int probes = 0;
  while (unauthorized + other < 100 && probes < 100) {
    auto r = HttpsGet(d.port(), "/healthz", {.timeout_ms = 5000});
    EXPECT_EQ(r.code, 200);
    EXPECT_LT(r.took, 1s) << r.took.count() << " ms";
    ++probes;
    std::this_thread::sleep_for(50ms);
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(unauthorized.load(), 100);
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(probes, 0);
  // The admin token still works (nothing was poisoned by the flood).
  EXPECT_EQ(HttpsGet(d.port(), "/metrics", {.token = kEnv->info().admin_token}).code, 200);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// --client-ca-file: CN = user, O = groups, authorized by a real SubjectAccessReview —
// system:masters may read /metrics, a user without RBAC may not, an unknown CA is no identity.
TEST(ServingAuthE2E, ClientCertificateAuthentication) {
  KCM_REQUIRE_TESTBED();
  TestCerts certs;
  auto ca = certs.MakeCA("e2e-client-ca");
  auto other_ca = certs.MakeCA("e2e-other-ca");
  auto admin = certs.MakeClientCert("admin", "/O=system:masters/CN=e2e-cert-admin", ca);
  auto nobody = certs.MakeClientCert("nobody", "/CN=e2e-cert-nobody", ca);
  auto stranger = certs.MakeClientCert("stranger", "/O=system:masters/CN=e2e-stranger", other_ca);
  ASSERT_FALSE(admin.cert.empty() || nobody.cert.empty() || stranger.cert.empty());
  Daemon d({"--client-ca-file=" + ca.cert});
  ASSERT_TRUE(d.serving()) << d.Log();
  auto ok = HttpsGet(d.port(), "/metrics", {.cert_file = admin.cert, .key_file = admin.key});
  EXPECT_EQ(ok.code, 200) << ok.body;
  EXPECT_NE(ok.body.find("process_resident_memory_bytes"), std::string::npos);
  auto denied = HttpsGet(d.port(), "/metrics", {.cert_file = nobody.cert, .key_file = nobody.key});
  EXPECT_EQ(denied.code, 403) << denied.body;
  EXPECT_EQ(
      HttpsGet(d.port(), "/metrics", {.cert_file = stranger.cert, .key_file = stranger.key}).code,
      401);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

// --requestheader-*: X-Remote-User/X-Remote-Group are believed only from a certificate signed
// by the request-header CA whose CN is in --requestheader-allowed-names.
TEST(ServingAuthE2E, RequestHeaderAuthenticationFromAllowedProxyOnly) {
  KCM_REQUIRE_TESTBED();
  TestCerts certs;
  auto proxy_ca = certs.MakeCA("e2e-proxy-ca");
  auto proxy = certs.MakeClientCert("proxy", "/CN=front-proxy", proxy_ca);
  auto rogue = certs.MakeClientCert("rogue", "/CN=rogue-proxy", proxy_ca);
  ASSERT_FALSE(proxy.cert.empty() || rogue.cert.empty());
  Daemon d({"--requestheader-client-ca-file=" + proxy_ca.cert,
            "--requestheader-allowed-names=front-proxy"});
  ASSERT_TRUE(d.serving()) << d.Log();
  const std::vector<std::string> masters = {"X-Remote-User: e2e-proxied-admin",
                                            "X-Remote-Group: system:masters"};
  auto ok = HttpsGet(d.port(), "/metrics",
                     {.cert_file = proxy.cert, .key_file = proxy.key, .headers = masters});
  EXPECT_EQ(ok.code, 200) << ok.body;
  auto no_group = HttpsGet(
      d.port(), "/metrics",
      {.cert_file = proxy.cert, .key_file = proxy.key, .headers = {"X-Remote-User: e2e-nobody"}});
  EXPECT_EQ(no_group.code, 403) << no_group.body;
  EXPECT_EQ(HttpsGet(d.port(), "/metrics",
                     {.cert_file = rogue.cert, .key_file = rogue.key, .headers = masters})
                .code,
            401);
  EXPECT_EQ(HttpsGet(d.port(), "/metrics", {.headers = masters}).code, 401);
  EXPECT_EQ(d.StopWith(SIGTERM), 0) << d.Log();
}

}  // namespace
}  // namespace kcm::e2e
