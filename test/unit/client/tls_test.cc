#include <gtest/gtest.h>

#include "pkg/client/api_errors.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/transport.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::Conn;
using testing::ReadFileOrDie;
using testing::RecordedRequest;
using testing::TestPki;
using testing::TestServer;
using testing::TlsOptions;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = TestPki::Get();
    if (pki_ == nullptr) GTEST_SKIP() << "openssl CLI could not make a test PKI";
  }
  TlsOptions ServerTls(bool require_client_cert = false) const {
    return {.cert_file = pki_->server_crt,
            .key_file = pki_->server_key,
            .client_ca_file = pki_->ca_crt,
            .require_client_cert = require_client_cert};
  }
  static Result<std::string> Get(const RestConfig& config) {
    auto client = RestClient::Create(config, {.retry = {.max_retries = 0}});
    if (!client.ok()) return client.error();
    return (*client)->Do({.path = "/api"});
  }
  const TestPki* pki_ = nullptr;
};

TestServer::Handler Echo() {
  return [](const RecordedRequest& r, Conn& c) { c.Respond(200, r.client_cert_cn); };
}

// 1.2 the server certificate is verified against a CA file or inline CA data.
TEST_F(TlsTest, CaFileAndDataVerify) {
  TestServer server(Echo(), ServerTls());
  auto r = Get({.host = server.url(), .ca_file = pki_->ca_crt, .qps = -1});
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  r = Get({.host = server.url(), .ca_data = ReadFileOrDie(pki_->ca_crt), .qps = -1});
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

// 1.2 a server signed by another CA is refused (code 0, TLS cause) unless insecure.
TEST_F(TlsTest, WrongCaFailsInsecureSucceeds) {
  TestServer server(Echo(), ServerTls());
  auto r = Get({.host = server.url(), .ca_file = pki_->other_ca_crt, .qps = -1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 0);
  EXPECT_EQ(r.error().transport, TransportCause::kTLS) << r.error().ToString();
  r = Get({.host = server.url(), .ca_file = pki_->other_ca_crt, .insecure = true, .qps = -1});
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

// 1.2 a client certificate (file or inline data) is presented to the server.
TEST_F(TlsTest, ClientCertificatePresented) {
  TestServer server(Echo(), ServerTls(/*require_client_cert=*/true));
  auto r = Get({.host = server.url(),
                .ca_file = pki_->ca_crt,
                .cert_file = pki_->client_crt,
                .key_file = pki_->client_key,
                .qps = -1});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(*r, "test-client");
  r = Get({.host = server.url(),
           .ca_data = ReadFileOrDie(pki_->ca_crt),
           .cert_data = ReadFileOrDie(pki_->client_crt),
           .key_data = ReadFileOrDie(pki_->client_key),
           .qps = -1});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(*r, "test-client");
  // Without one, a server that requires it refuses the handshake.
  r = Get({.host = server.url(), .ca_file = pki_->ca_crt, .qps = -1});
  EXPECT_FALSE(r.ok());
}

// 1.2 a bearer token travels in the Authorization header; unreadable TLS files fail early.
TEST_F(TlsTest, BearerTokenAndBadFiles) {
  TestServer server(
      [](const RecordedRequest& r, Conn& c) { c.Respond(200, r.Header("authorization")); });
  auto r = Get({.host = server.url(), .bearer_token = "abc", .qps = -1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "Bearer abc");
  auto bad = RestClient::Create({.host = server.url(), .ca_file = "/nonexistent/ca.crt"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("/nonexistent/ca.crt"), std::string::npos);
}

}  // namespace
}  // namespace kcm::client
