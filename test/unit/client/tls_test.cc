#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/transport.h"
#include "pkg/client/watch_stream.h"
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

// Connections keep their TLS buffers between records (transport.cc, KeepTlsBuffers): one TLS
// connection carries request after request whose bodies and answers each span several records,
// with a client certificate, and every answer arrives whole.
TEST_F(TlsTest, KeptConnectionCarriesMultiRecordBodies) {
  TestServer server(
      [](const RecordedRequest& r, Conn& c) { c.Respond(200, r.client_cert_cn + ":" + r.body); },
      ServerTls(/*require_client_cert=*/true));
  auto client = RestClient::Create({.host = server.url(),
                                    .ca_file = pki_->ca_crt,
                                    .cert_file = pki_->client_crt,
                                    .key_file = pki_->client_key,
                                    .qps = -1},
                                   {.retry = {.max_retries = 0}});
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  for (int i = 0; i < 20; ++i) {
    // 40-70 kB: three to five 16 kB TLS records each way, a different size each time.
    std::string body(40000 + 1500 * i, static_cast<char>('a' + i));
    body.front() = '<';
    body.back() = '>';
    auto r = (*client)->Do({.verb = "PUT", .path = "/echo", .body = body});
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(*r, "test-client:" + body) << "request " << i;
  }
  EXPECT_EQ(server.connections(), 1);
}

// TLS records read ahead of an answer are looked at before the connection is reused: the server
// sends, in the same TCP segment as its answer, a record nobody asked for. One recv takes both
// (transport.cc reads ahead), so the second waits inside OpenSSL while the socket looks empty; the
// next request must go on a new connection and get its own answer, not the unasked one.
TEST_F(TlsTest, UnaskedRecordReadAheadWithAnAnswerRetiresTheConnection) {
  TestServer server(
      [](const RecordedRequest& r, Conn& c) {
        if (r.path != "/first") {
          c.Respond(200, "own answer");
          return;
        }
        const int on = 1;
        const int off = 0;
        setsockopt(c.fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on);
        c.WriteAll("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        c.WriteAll("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nunasked");
        setsockopt(c.fd(), IPPROTO_TCP, TCP_CORK, &off, sizeof off);
      },
      // No client CA: the second connection resumes the first one's session.
      TlsOptions{.cert_file = pki_->server_crt, .key_file = pki_->server_key});
  auto transport = Transport::Create({.ca_file = pki_->ca_crt});
  ASSERT_TRUE(transport.ok()) << transport.error().ToString();
  HttpRequest first;
  first.url = server.url() + "/first";
  auto r1 = (*transport)->RoundTrip(first);
  ASSERT_TRUE(r1.ok()) << r1.error().ToString();
  EXPECT_EQ(r1->body, "{}");
  HttpRequest second;
  second.method = "POST";
  second.url = server.url() + "/second";
  auto r2 = (*transport)->RoundTrip(second);
  ASSERT_TRUE(r2.ok()) << r2.error().ToString();
  EXPECT_EQ(r2->body, "own answer");
  EXPECT_EQ(server.connections(), 2);
}

// A RoundTrip waits for its answer inside the read, which the socket's receive timeout (100 ms,
// transport.cc kBlockingReadMs) ends empty-handed while nothing came: an answer that starts after
// several such timeouts and pauses as long inside its head and its body arrives whole, and the
// connection is kept for the next request.
TEST_F(TlsTest, AnswerSlowerThanTheReceiveTimeoutArrivesWhole) {
  TestServer server(
      [](const RecordedRequest&, Conn& c) {
        std::this_thread::sleep_for(std::chrono::milliseconds(350));
        c.WriteAll("HTTP/1.1 200 OK\r\nContent-");
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        c.WriteAll("Length: 10\r\n\r\n01234");
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        c.WriteAll("56789");
      },
      ServerTls());
  auto client = RestClient::Create({.host = server.url(), .ca_file = pki_->ca_crt, .qps = -1});
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  for (int i = 0; i < 2; ++i) {
    auto r = (*client)->Do({.path = "/slow"});
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(*r, "0123456789");
  }
  EXPECT_EQ(server.connections(), 1);
}

// 1.8 a watch over TLS whose events come in bursts with pauses between them, one burst far larger
// than a read buffer: every frame arrives, in order, and each burst is read as it comes (the
// stream waits for the socket only once a read found nothing left; transport.cc, HttpStream::Read).
// The bound is for liveness: a burst left unread until the stream's 1 s poll timeout would take
// the 12 bursts past it.
TEST_F(TlsTest, WatchReadsEveryBurstAsItComes) {
  constexpr int kBursts = 12;
  auto frame = [](int burst, int i, std::size_t pad) {
    return R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p)" +
           std::to_string(burst) + "-" + std::to_string(i) + R"("},"pad":")" +
           std::string(pad, 'x') + "\"}}\n";
  };
  auto burst_size = [](int burst) { return burst == 5 ? 3000 : 1 + burst % 3; };
  TestServer server(
      [&](const RecordedRequest&, Conn& c) {
        c.StartChunked(200);
        for (int b = 0; b < kBursts; ++b) {
          std::string data;
          for (int i = 0; i < burst_size(b); ++i) data += frame(b, i, b == 5 ? 1000 : 10);
          c.Chunk(data);
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
        }
        c.EndChunked();
      },
      ServerTls());
  auto client = RestClient::Create({.host = server.url(), .ca_file = pki_->ca_crt, .qps = -1});
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  ResourceClient pods(*client, {"", "v1", "pods"}, true);
  const auto start = std::chrono::steady_clock::now();
  auto w = pods.Watch("ns", {});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  std::vector<std::string> want;
  for (int b = 0; b < kBursts; ++b) {
    for (int i = 0; i < burst_size(b); ++i) {
      std::string f = frame(b, i, b == 5 ? 1000 : 10);
      f.pop_back();  // the newline between frames
      want.push_back(std::move(f));
    }
  }
  std::vector<std::string> got;
  while (true) {
    auto f = (*w)->Next();
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    if (!f->has_value()) break;
    got.push_back(**f);
  }
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6));
}

}  // namespace
}  // namespace kcm::client
