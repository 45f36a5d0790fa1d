#include "pkg/server/secure_server.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include "pkg/metrics/metrics.h"

namespace kcm::server {
namespace {

struct Response {
  long code = 0;
  std::string body;
};

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

Response Get(int port, const std::string& path, const std::string& token = "") {
  Response r;
  CURL* curl = curl_easy_init();
  std::string url = "https://127.0.0.1:" + std::to_string(port) + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);  // Self-signed serving certificate.
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
  curl_slist* headers = nullptr;
  if (!token.empty()) {
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return r;
}

ServingOptions Loopback() {
  ServingOptions o;
  o.bind_address = "127.0.0.1";
  o.port = 0;
  return o;
}

class FakeAuthorizer : public RequestAuthorizer {
 public:
  Result<Decision> Authorize(std::string_view token, std::string_view verb,
                             std::string_view path) override {
    last_verb = std::string(verb);
    last_path = std::string(path);
    if (token.empty()) return Decision::kUnauthenticated;
    return token == "good" ? Decision::kAllow : Decision::kForbidden;
  }
  std::string last_verb, last_path;
};

// S1: health endpoints answer "ok" when every check passes.
TEST(SecureServerTest, HealthEndpointsPass) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_GT(server.Port(), 0);
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    Response r = Get(server.Port(), path);
    EXPECT_EQ(r.code, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
  EXPECT_EQ(Get(server.Port(), "/nope").code, 404);
}

// S1: readiness includes the ready checks (leader, synced, ...); liveness does not.
TEST(SecureServerTest, ReadyzFailsOnReadyCheckOnly) {
  SecureServer server(Loopback());
  server.AddHealthCheck({"ping", [] { return OkStatus(); }});
  server.AddReadyCheck({"informer-sync", [] { return Status(Error::Local("", "not synced")); }});
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(Get(server.Port(), "/healthz").code, 200);
  Response r = Get(server.Port(), "/readyz?verbose");
  EXPECT_EQ(r.code, 500);
  EXPECT_NE(r.body.find("[+]ping ok"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("[-]informer-sync failed: not synced"), std::string::npos) << r.body;
}

TEST(SecureServerTest, MetricsServedOnLoopbackWithoutAuthorizer) {
  metrics::CounterVec c("kcm_server_test_total", "test", {"x"});
  c.With({"y"}).Inc();
  SecureServer server(Loopback());
  ASSERT_TRUE(server.Start().ok());
  Response r = Get(server.Port(), "/metrics");
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
  EXPECT_EQ(Get(server.Port(), "/metrics").code, 403);
  EXPECT_EQ(Get(server.Port(), "/healthz").code, 200);  // Always-allowed path.
}

// S2: delegated authn/authz decides for paths outside the always-allow list.
TEST(SecureServerTest, AuthorizerDecides) {
  ServingOptions o = Loopback();
  o.bind_address = "0.0.0.0";
  auto authorizer = std::make_shared<FakeAuthorizer>();
  SecureServer server(o);
  server.SetAuthorizer(authorizer);
  ASSERT_TRUE(server.Start().ok());
  EXPECT_EQ(Get(server.Port(), "/metrics").code, 401);
  EXPECT_EQ(Get(server.Port(), "/metrics", "bad").code, 403);
  EXPECT_EQ(Get(server.Port(), "/metrics", "good").code, 200);
  EXPECT_EQ(authorizer->last_verb, "get");
  EXPECT_EQ(authorizer->last_path, "/metrics");
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

}  // namespace
}  // namespace kcm::server
