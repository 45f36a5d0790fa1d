// SecureServer's endpoints, authorization paths and TLS settings, against scripted authorizers.
#include "pkg/server/secure_server.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <mutex>

#include "pkg/metrics/metrics.h"
#include "test/unit/server/tls_client.h"

namespace kcm::server {
namespace {

using namespace std::chrono_literals;
using testing::GetOptions;
using testing::HttpsGet;
using testing::TestCerts;
using testing::TlsClient;

ServingOptions Loopback() {
  ServingOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  return o;
}

// Allows the token "good" and the user "metrics-reader"; records what it was asked.
class FakeAuthorizer : public RequestAuthorizer {
 public:
  Result<Decision> Authorize(std::string_view token, std::string_view verb,
                             std::string_view path) override {
    std::lock_guard lock(mu_);
    ++calls_;
    last_verb_ = std::string(verb);
    last_path_ = std::string(path);
    if (token.empty()) return Decision::kUnauthenticated;
    return token == "good" ? Decision::kAllow : Decision::kForbidden;
  }
  Result<Decision> AuthorizeUser(const UserInfo& user, std::string_view verb,
                                 std::string_view path) override {
    std::lock_guard lock(mu_);
    ++calls_;
    last_user_ = user;
    last_verb_ = std::string(verb);
    last_path_ = std::string(path);
    return user.name == "metrics-reader" || user.name == "alice" ? Decision::kAllow
                                                                 : Decision::kForbidden;
  }
  std::string last_verb() {
    std::lock_guard lock(mu_);
    return last_verb_;
  }
  std::string last_path() {
    std::lock_guard lock(mu_);
    return last_path_;
  }
  UserInfo last_user() {
    std::lock_guard lock(mu_);
    return last_user_;
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  int calls_ = 0;
  std::string last_verb_, last_path_;
  UserInfo last_user_;
};

// A server bound off loopback, so that a path outside `always_allow_paths` needs authentication
// and authorization, which a FakeAuthorizer gives; with the health check "ping". Not started.
struct ServerWithAuthorizer {
  explicit ServerWithAuthorizer(std::vector<std::string> always_allow_paths)
      : server([&] {
          ServingOptions o = Loopback();
          o.bind_address = "0.0.0.0";
          o.always_allow_paths = std::move(always_allow_paths);
          return o;
        }()) {
    server.AddHealthCheck({"ping", [] { return OkStatus(); }});
    server.SetAuthorizer(authorizer);
  }
  std::shared_ptr<FakeAuthorizer> authorizer = std::make_shared<FakeAuthorizer>();
  SecureServer server;
};

// S1: health endpoints answer "ok" when every check passes.
TEST(SecureServerTest, HealthEndpointsPass) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.Port(), 0);
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto r = HttpsGet(server.Port(), path);
    EXPECT_EQ(r.code, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
  EXPECT_EQ(HttpsGet(server.Port(), "/nope").code, 404);
}

// S1: readiness includes the ready checks (leader, synced, ...); liveness does not.
TEST(SecureServerTest, ReadyzFailsOnReadyCheckOnly) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  server.AddReadyCheck({"informer-sync", [] { return Status(Error::Local("", "not synced")); }});
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz").code, 200);
  auto r = HttpsGet(server.Port(), "/readyz?verbose");
  EXPECT_EQ(r.code, 500);
  EXPECT_NE(r.body.find("[+]ping ok"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("[-]informer-sync failed: not synced"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("readyz check failed"), std::string::npos) << r.body;
}

// Upstream's healthz handler: /<endpoint>/<check> runs one check, ?exclude= skips one.
TEST(SecureServerTest, HealthSubPathsAndExclude) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  server.AddReadyCheck({"informer-sync", [] { return Status(Error::Local("", "not synced")); }});
  ASSERT_TRUE(server.Start().ok());
  auto ping = HttpsGet(server.Port(), "/healthz/ping");
  EXPECT_EQ(ping.code, 200);
  EXPECT_EQ(ping.body, "ok");
  auto sync = HttpsGet(server.Port(), "/readyz/informer-sync");
  EXPECT_EQ(sync.code, 500);
  EXPECT_NE(sync.body.find("not synced"), std::string::npos) << sync.body;
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz/informer-sync").code, 404);  // Not a liveness check.
  auto excluded = HttpsGet(server.Port(), "/readyz?exclude=informer-sync&verbose");
  EXPECT_EQ(excluded.code, 200) << excluded.body;
  EXPECT_NE(excluded.body.find("[+]informer-sync excluded: ok"), std::string::npos)
      << excluded.body;
  EXPECT_NE(excluded.body.find("readyz check passed"), std::string::npos) << excluded.body;
}

TEST(SecureServerTest, MetricsServedOnLoopbackWithoutAuthorizer) {
  metrics::CounterVec c("kcm_server_test_total", "test", {"x"});
  c.With({"y"}).Inc();
  SecureServer server(Loopback());
  ASSERT_TRUE(server.Start().ok());
  auto r = HttpsGet(server.Port(), "/metrics");
  EXPECT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("kcm_server_test_total{x=\"y\"} 1"), std::string::npos);
}

// S2: off loopback, /metrics is never served to anyone without an authorizer.
TEST(SecureServerTest, MetricsRefusedOffLoopbackWithoutAuthorizer) {
  ServingOptions o = Loopback();
  o.bind_address = "0.0.0.0";
  SecureServer server(o);
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics").code, 403);
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz").code, 200);  // Always-allowed path.
}

// S2: delegated authn/authz decides for paths outside the always-allow list.
TEST(SecureServerTest, AuthorizerDecides) {
  ServerWithAuthorizer s({"/healthz", "/readyz", "/livez"});
  auto& [authorizer, server] = s;
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics").code, 401);
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.token = "bad"}).code, 403);
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.token = "good"}).code, 200);
  EXPECT_EQ(authorizer->last_verb(), "get");
  EXPECT_EQ(authorizer->last_path(), "/metrics");
  // A health sub-path outside the always-allow list is authorized like any other path.
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz/ping").code, 401);
}

// --authorization-always-allow-paths keeps upstream's meaning for any path, not only the health
// ones: a listed /metrics is served to a caller with no credentials at all (upstream:
// system:anonymous, allowed by the path authorizer), and the authorizer is never asked.
TEST(SecureServerTest, ListedMetricsServedWithoutCredentials) {
  metrics::CounterVec c("kcm_server_listed_test_total", "test", {});
  c.With({}).Inc();
  ServerWithAuthorizer s({"/healthz", "/readyz", "/livez", "/metrics"});
  auto& [authorizer, server] = s;
  ASSERT_TRUE(server.Start().ok());
  auto r = HttpsGet(server.Port(), "/metrics");
  EXPECT_EQ(r.code, 200) << r.body;
  EXPECT_NE(r.body.find("kcm_server_listed_test_total 1"), std::string::npos);
  EXPECT_EQ(authorizer->calls(), 0);
}

// Unlisted, /metrics keeps the delegated authn/authz: no credentials 401, a token 403 or 200.
TEST(SecureServerTest, UnlistedMetricsStillRefused) {
  ServerWithAuthorizer s({"/healthz", "/metricz", "/metrics/*"});
  auto& [authorizer, server] = s;
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics").code, 401);
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.token = "bad"}).code, 403);
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.token = "good"}).code, 200);
  EXPECT_EQ(authorizer->calls(), 3);
}

// Handle: a path's handler runs after authorization with the verb of the request's method in
// lower case (upstream's RequestInfoFactory for non-resource paths), sees the method, body and
// Accept header, and answers every method itself; another path is 404 whatever the method
// (upstream's mux), and the health endpoints only read (405).
TEST(SecureServerTest, HandlersSeeTheRequestAfterAuthorizationByMethod) {
  ServerWithAuthorizer s({"/healthz"});
  auto& [authorizer, server] = s;
  std::mutex mu;
  Request seen;
  server.Handle("/debug/flags/v", [&](const Request& r) {
    std::lock_guard lock(mu);
    seen = r;
    return Response{201, "text/plain", "took " + r.body, {{"X-Test", "1"}}};
  });
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/debug/flags/v", {.method = "PUT", .body = "3"}).code, 401);
  auto r = HttpsGet(server.Port(), "/debug/flags/v?x=1",
                    {.token = "good",
                     .headers = {"Accept: text/plain", "User-Agent: curl/8.5.0"},
                     .method = "PUT",
                     .body = "3"});
  EXPECT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(r.body, "took 3");
  EXPECT_EQ(authorizer->last_verb(), "put");
  EXPECT_EQ(authorizer->last_path(), "/debug/flags/v");
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(seen.method, "PUT");
    EXPECT_EQ(seen.query, "x=1");
    EXPECT_EQ(seen.accept, "text/plain");
    EXPECT_EQ(seen.user_agent, "curl/8.5.0");
  }
  auto denied = HttpsGet(server.Port(), "/debug/flags/v", {.token = "bad", .method = "PUT"});
  EXPECT_EQ(denied.code, 403);
  EXPECT_NE(denied.body.find("cannot put path \"/debug/flags/v\""), std::string::npos)
      << denied.body;
  EXPECT_EQ(HttpsGet(server.Port(), "/nope", {.token = "good", .method = "PUT"}).code, 404);
  EXPECT_EQ(HttpsGet(server.Port(), "/nope", {.method = "PUT"}).code, 401);
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz", {.method = "PUT"}).code, 405);
}

// A handler that throws answers 500 and the server goes on serving.
TEST(SecureServerTest, HandlerExceptionIs500) {
  SecureServer server(Loopback());
  server.Handle("/boom", [](const Request&) -> Response { throw std::runtime_error("boom"); });
  server.Handle("/fine", [](const Request&) { return TextResponse(200, "fine"); });
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/boom").code, 500);
  EXPECT_EQ(HttpsGet(server.Port(), "/fine").body, "fine");
}

// /metrics/slis: every check a health endpoint's root ran, as upstream's SLI families; a single
// check's sub-path records nothing (upstream the same); DELETE resets.
TEST(SecureServerTest, MetricsSlisRecordHealthChecksAndReset) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  server.AddReadyCheck({"informer-sync", [] { return Status(Error::Local("", "not synced")); }});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_EQ(HttpsGet(server.Port(), "/healthz").code, 200);
  ASSERT_EQ(HttpsGet(server.Port(), "/readyz").code, 500);
  ASSERT_EQ(HttpsGet(server.Port(), "/readyz").code, 500);
  ASSERT_EQ(HttpsGet(server.Port(), "/livez/ping").code, 200);
  auto r = HttpsGet(server.Port(), "/metrics/slis");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line : {
           "kubernetes_healthcheck{name=\"ping\",type=\"healthz\"} 1",
           "kubernetes_healthcheck{name=\"informer-sync\",type=\"readyz\"} 0",
           "kubernetes_healthchecks_total{name=\"informer-sync\",status=\"error\",type=\"readyz\"} "
           "2",
           "kubernetes_healthchecks_total{name=\"ping\",status=\"success\",type=\"readyz\"} 2",
           "# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all "
           "healthcheck.",
       }) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line << "\n" << r.body;
  }
  EXPECT_EQ(r.body.find("type=\"livez\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("process_start_time_seconds "), std::string::npos);
  auto reset = HttpsGet(server.Port(), "/metrics/slis", {.method = "DELETE"});
  EXPECT_EQ(reset.code, 200);
  EXPECT_EQ(reset.body, "metrics reset\n");
  // Upstream's reset empties the start time too, for good; the next health check comes back.
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics/slis").body, "");
  ASSERT_EQ(HttpsGet(server.Port(), "/healthz").code, 200);
  auto after = HttpsGet(server.Port(), "/metrics/slis");
  EXPECT_NE(after.body.find("kubernetes_healthcheck{name=\"ping\",type=\"healthz\"} 1"),
            std::string::npos)
      << after.body;
  EXPECT_EQ(after.body.find("process_start_time_seconds"), std::string::npos) << after.body;
}

// Upstream's path matching: an entry's leading '/' is optional, a trailing '*' is a prefix.
TEST(SecureServerTest, AlwaysAllowPathsMatchAsUpstream) {
  ServerWithAuthorizer s({"metrics", "/healthz/*"});
  auto& [authorizer, server] = s;
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics").code, 200);
  auto ping = HttpsGet(server.Port(), "/healthz/ping");
  EXPECT_EQ(ping.code, 200);
  EXPECT_EQ(ping.body, "ok");
  EXPECT_EQ(authorizer->calls(), 0);
  // "/healthz/*" does not cover "/healthz" itself, and /livez is not listed.
  EXPECT_EQ(HttpsGet(server.Port(), "/healthz").code, 401);
  EXPECT_EQ(HttpsGet(server.Port(), "/livez").code, 401);
  EXPECT_EQ(authorizer->calls(), 2);
}

TEST(SecureServerTest, StarAloneAllowsEveryPath) {
  ServerWithAuthorizer s({"*"});
  auto& [authorizer, server] = s;
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics").code, 200);
  EXPECT_EQ(HttpsGet(server.Port(), "/livez/ping").code, 200);
  EXPECT_EQ(HttpsGet(server.Port(), "/nope").code, 404);
  EXPECT_EQ(authorizer->calls(), 0);
}

// Upstream refuses to start on a '*' that is not the entry's last character.
TEST(SecureServerTest, InnerStarInAlwaysAllowPathsIsAnError) {
  ServingOptions o = Loopback();
  o.always_allow_paths = {"/healthz", "/debug*/pprof"};
  SecureServer server(o);
  Status s = server.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "--authorization-always-allow-paths: only trailing * allowed in \"debug*/pprof\"");
}

TEST(SecureServerTest, PortInUseIsAClearError) {
  SecureServer first(Loopback());
  ASSERT_TRUE(first.Start().ok());
  ServingOptions o = Loopback();
  o.port = first.Port();
  SecureServer second(o);
  Status s = second.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(std::to_string(first.Port())), std::string::npos);
}

TEST(SecureServerTest, MissingCertificateFileIsAClearError) {
  ServingOptions o = Loopback();
  o.tls_cert_file = "/nonexistent/tls.crt";
  o.tls_private_key_file = "/nonexistent/tls.key";
  SecureServer server(o);
  Status s = server.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("/nonexistent/tls.crt"), std::string::npos);
}

TEST(SecureServerTest, MissingClientCAFileNamesTheFlag) {
  ServingOptions o = Loopback();
  o.client_ca_file = "/nonexistent/ca.crt";
  SecureServer server(o);
  Status s = server.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("--client-ca-file"), std::string::npos) << s.error().message;
}

bool Handshakes(int port, int max_version, const std::string& ciphers) {
  TlsClient c(port, {.max_version = max_version, .ciphers = ciphers});
  return c.handshake_ok();
}

// The default TLS 1.2 suites are ECDHE + AEAD only: the CBC/SHA-1 suite old clients offer first
// (ECDHE-ECDSA-AES128-SHA) is refused, as `openssl s_client -tls1_2 -cipher ...` would see.
TEST(SecureServerTest, Tls12CbcSuiteRefusedByDefault) {
  SecureServer server(Loopback());
  ASSERT_TRUE(server.Start().ok());
  EXPECT_FALSE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  EXPECT_FALSE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES256-SHA384"));
  EXPECT_TRUE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  EXPECT_TRUE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"));
  EXPECT_TRUE(Handshakes(server.Port(), 0, ""));  // TLS 1.3
  EXPECT_FALSE(Handshakes(server.Port(), TLS1_1_VERSION, ""));
}

// --tls-cipher-suites with upstream's IANA names replaces the default list.
TEST(SecureServerTest, CipherSuitesFlagSelectsSuites) {
  ServingOptions o = Loopback();
  o.tls_cipher_suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"};
  SecureServer server(o);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_TRUE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  EXPECT_FALSE(Handshakes(server.Port(), TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"));

  o.tls_cipher_suites = {"TLS_NOT_A_SUITE"};
  SecureServer bad(o);
  Status s = bad.Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("TLS_NOT_A_SUITE"), std::string::npos);
}

TEST(SecureServerTest, MinVersionTls13RefusesTls12) {
  ServingOptions o = Loopback();
  o.tls_min_version = "VersionTLS13";
  SecureServer server(o);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_FALSE(Handshakes(server.Port(), TLS1_2_VERSION, ""));
  EXPECT_TRUE(Handshakes(server.Port(), 0, ""));
}

// --client-ca-file: a verified client certificate is the user CN with groups O (plus
// system:authenticated), authorized by the authorizer's SubjectAccessReview path.
TEST(SecureServerTest, ClientCertificateAuthenticates) {
  TestCerts certs;
  auto ca = certs.MakeCA("client-ca");
  auto other_ca = certs.MakeCA("other-ca");
  auto reader = certs.MakeClientCert("reader", "/O=team-a/O=team-b/CN=metrics-reader", ca);
  auto bob = certs.MakeClientCert("bob", "/CN=bob", ca);
  auto stranger = certs.MakeClientCert("stranger", "/CN=metrics-reader", other_ca);
  ASSERT_FALSE(reader.cert.empty() || bob.cert.empty() || stranger.cert.empty());

  ServingOptions o = Loopback();
  o.client_ca_file = ca.cert;
  auto authorizer = std::make_shared<FakeAuthorizer>();
  SecureServer server(o);
  server.SetAuthorizer(authorizer);
  ASSERT_TRUE(server.Start().ok());

  auto ok = HttpsGet(server.Port(), "/metrics", {.cert_file = reader.cert, .key_file = reader.key});
  EXPECT_EQ(ok.code, 200) << ok.body;
  UserInfo user = authorizer->last_user();
  EXPECT_EQ(user.name, "metrics-reader");
  EXPECT_EQ(user.groups, (std::vector<std::string>{"team-a", "team-b", "system:authenticated"}));

  auto forbidden =
      HttpsGet(server.Port(), "/metrics", {.cert_file = bob.cert, .key_file = bob.key});
  EXPECT_EQ(forbidden.code, 403);
  EXPECT_NE(forbidden.body.find("bob"), std::string::npos) << forbidden.body;
  // Signed by another CA: not authenticated (and no token either).
  EXPECT_EQ(
      HttpsGet(server.Port(), "/metrics", {.cert_file = stranger.cert, .key_file = stranger.key})
          .code,
      401);
  // Without a certificate, bearer tokens still work.
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.token = "good"}).code, 200);
}

// --requestheader-*: the headers are trusted only from a certificate that verifies against the
// request-header CA and whose CN is allowed; anything else cannot assert a user.
TEST(SecureServerTest, RequestHeaderAuthOnlyFromAllowedProxy) {
  TestCerts certs;
  auto proxy_ca = certs.MakeCA("proxy-ca");
  auto client_ca = certs.MakeCA("client-ca");
  auto proxy = certs.MakeClientCert("proxy", "/CN=front-proxy", proxy_ca);
  auto rogue_proxy = certs.MakeClientCert("rogue", "/CN=rogue-proxy", proxy_ca);
  auto bob = certs.MakeClientCert("bob", "/CN=bob", client_ca);
  ASSERT_FALSE(proxy.cert.empty() || rogue_proxy.cert.empty() || bob.cert.empty());

  ServingOptions o = Loopback();
  o.client_ca_file = client_ca.cert;
  o.request_header.client_ca_file = proxy_ca.cert;
  o.request_header.allowed_names = {"front-proxy"};
  auto authorizer = std::make_shared<FakeAuthorizer>();
  SecureServer server(o);
  server.SetAuthorizer(authorizer);
  ASSERT_TRUE(server.Start().ok());

  const std::vector<std::string> alice = {"X-Remote-User: alice", "X-Remote-Group: g1",
                                          "X-Remote-Group: g2",
                                          "X-Remote-Extra-Acme.com%2Fproject: p1"};
  auto ok = HttpsGet(server.Port(), "/metrics",
                     {.cert_file = proxy.cert, .key_file = proxy.key, .headers = alice});
  EXPECT_EQ(ok.code, 200) << ok.body;
  UserInfo user = authorizer->last_user();
  EXPECT_EQ(user.name, "alice");
  EXPECT_EQ(user.groups, (std::vector<std::string>{"g1", "g2", "system:authenticated"}));
  ASSERT_EQ(user.extra.count("acme.com/project"), 1u);
  EXPECT_EQ(user.extra["acme.com/project"], std::vector<std::string>{"p1"});

  // A proxy CA certificate whose CN is not allowed: the headers are ignored → 401.
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics",
                     {.cert_file = rogue_proxy.cert, .key_file = rogue_proxy.key, .headers = alice})
                .code,
            401);
  // A client-CA certificate is its own CN; it cannot assert alice.
  auto as_bob = HttpsGet(server.Port(), "/metrics",
                         {.cert_file = bob.cert, .key_file = bob.key, .headers = alice});
  EXPECT_EQ(as_bob.code, 403);
  EXPECT_EQ(authorizer->last_user().name, "bob");
  // No certificate: headers alone mean nothing.
  EXPECT_EQ(HttpsGet(server.Port(), "/metrics", {.headers = alice}).code, 401);
}

// Keep-alive works, and an idle kept-alive connection is closed after idle_timeout.
TEST(SecureServerTest, KeepAliveThenIdleTimeout) {
  ServingOptions o = Loopback();
  o.idle_timeout = 1s;
  SecureServer server(o);
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  ASSERT_TRUE(server.Start().ok());
  TlsClient c(server.Port(), {});
  ASSERT_TRUE(c.handshake_ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(c.Write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    std::string response = c.ReadResponse(5s);
    EXPECT_EQ(response.rfind("HTTP/1.1 200", 0), 0u) << response;
    EXPECT_NE(response.find("\r\n\r\nok"), std::string::npos) << response;
  }
  EXPECT_TRUE(c.WaitClosed(5s));
}

}  // namespace
}  // namespace kcm::server
