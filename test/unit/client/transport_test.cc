// The libcurl transport against a scripted server: body framing split across reads, gzip
// answers inflated, the resend of a request whose reused connection was closed (once, and never
// for a non-idempotent request once bytes were sent), proxies from the environment (HTTP CONNECT
// for https, absolute-form requests for http, NO_PROXY, loopback never proxied), and a thread's
// handle and connection reused across requests.
#include "pkg/client/transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/unit/client/test_server.h"
#include "test/unit/client/transport_testing.h"

namespace kcm::client {
namespace {

using namespace std::chrono_literals;
using testing::Conn;
using testing::Get;
using testing::NewTransport;
using testing::RecordedRequest;
using testing::TestServer;

std::string Gzip(std::string_view data) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A body whose chunk-size lines, data and CRLFs arrive in separate writes (a chunk-size line cut
// in the middle too) is put together whole, by RoundTrip and by a stream.
TEST(TransportTest, ChunkedFramingSplitAcrossReads) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    const std::vector<std::string> pieces = {
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        "1",
        "2\r\n{\"a\":\"0123",
        "456789\"}",
        "\r",
        "\n3;ext=1\r\n,\n ",
        "\r\n0\r\n",
        "\r\n"};
    for (const auto& p : pieces) {
      c.WriteAll(p);
      std::this_thread::sleep_for(20ms);
    }
  });
  auto t = NewTransport();
  auto r = t->RoundTrip(Get(server.url() + "/x"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "{\"a\":\"0123456789\"},\n ");
  EXPECT_EQ(r->content_type, "application/json");

  auto stream = t->Stream(Get(server.url() + "/w"));
  std::string got;
  for (;;) {
    auto n = stream->Read(&got);
    ASSERT_TRUE(n.ok()) << n.error().ToString();
    if (*n == 0) break;
  }
  EXPECT_EQ(got, "{\"a\":\"0123456789\"},\n ");
  EXPECT_EQ(stream->status(), 200);
  // Both bodies ended at their terminating chunk: the round trip's connection stays in the
  // Transport's request pool and serves its next request (the stream ran on the streams multi,
  // whose connections are apart from the requests').
  ASSERT_TRUE(t->RoundTrip(Get(server.url() + "/again")).ok());
  EXPECT_EQ(server.connections(), 2);
}

// A gzip answer (with Content-Length, or chunked) is inflated; requests ask for gzip unless
// compression is disabled; the size limit applies to the inflated body.
TEST(TransportTest, GzipAnswersInflated) {
  const std::string json = "{\"items\":[" + std::string(200000, ' ') + "]}";
  const std::string gz = Gzip(json);
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (r.Header("accept-encoding") != "gzip") {
      c.Respond(200, json);
    } else if (r.path == "/chunked") {
      c.StartChunked(200, {{"Content-Encoding", "gzip"}});
      c.Chunk(gz.substr(0, gz.size() / 2));
      c.Chunk(gz.substr(gz.size() / 2));
      c.EndChunked();
    } else {
      c.Respond(200, gz, {{"Content-Encoding", "gzip"}});
    }
  });
  auto t = NewTransport();
  for (const std::string path : {"/length", "/chunked"}) {
    auto r = t->RoundTrip(Get(server.url() + path));
    ASSERT_TRUE(r.ok()) << r.error().ToString();
    EXPECT_EQ(r->body, json) << path;
  }
  EXPECT_EQ(server.requests().at(0).Header("accept-encoding"), "gzip");

  HttpRequest limited = Get(server.url() + "/length");
  limited.max_body_bytes = 100000;  // the compressed body is far smaller, the inflated one not
  auto r = t->RoundTrip(limited);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kTooLarge) << r.error().ToString();

  RestConfig plain;
  plain.disable_compression = true;
  auto identity = NewTransport(plain)->RoundTrip(Get(server.url() + "/length"));
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity->body, json);
  EXPECT_EQ(server.requests().back().Header("accept-encoding"), "");
}

// A server that answers the first request and then closes its connections on every later one
// without answering: a GET on the reused connection is sent once more on a new connection (and
// only once), a POST whose bytes went out on the reused connection is not sent again (net/http's
// persistConn.shouldRetryRequest: nothing written yet, or Request.isReplayable).
TEST(TransportTest, ClosedKeepAliveConnectionResentOnceAndNeverAPostAfterSending) {
  std::atomic<int> served{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    if (served.fetch_add(1) == 0) {
      c.Respond(200, "{}");
    } else {
      c.Close();
    }
  });
  auto t = NewTransport();
  ASSERT_TRUE(t->RoundTrip(Get(server.url() + "/first")).ok());
  auto r = t->RoundTrip(Get(server.url() + "/get"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kConnectionReset) << r.error().ToString();
  // /first, then /get on the kept connection and /get once more on a new one, no third time.
  ASSERT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(server.requests()[1].path, "/get");
  EXPECT_EQ(server.requests()[2].path, "/get");
  EXPECT_EQ(server.connections(), 2);

  // The same for a POST: its bytes reached the server on the kept connection, so no resend.
  served = 0;
  TestServer server2([&](const RecordedRequest&, Conn& c) {
    if (served.fetch_add(1) == 0) {
      c.Respond(200, "{}");
    } else {
      c.Close();
    }
  });
  ASSERT_TRUE(t->RoundTrip(Get(server2.url() + "/first")).ok());
  HttpRequest post = Get(server2.url() + "/post");
  post.method = "POST";
  post.body = "{\"kind\":\"Event\"}";
  auto p = t->RoundTrip(post);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().transport, TransportCause::kConnectionReset);
  EXPECT_NE(p.error().message.find("POST " + server2.url() + "/post: "), std::string::npos)
      << p.error().message;
  // Sent once: libcurl may open the new connection before it learns the body cannot be sent
  // again, and then sends nothing on it.
  ASSERT_EQ(server2.requests().size(), 2u);
  EXPECT_EQ(server2.requests()[1].body, "{\"kind\":\"Event\"}");
}

// A connection the server closed while it sat idle is noticed before use: the next request goes
// on a new connection without a failed attempt.
TEST(TransportTest, IdleConnectionClosedByServerIsNotUsed) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.Respond(200, "{}", {{"Connection", "keep-alive"}});
    c.Close();
  });
  auto t = NewTransport();
  ASSERT_TRUE(t->RoundTrip(Get(server.url() + "/a")).ok());
  std::this_thread::sleep_for(50ms);
  HttpRequest post = Get(server.url() + "/b");
  post.method = "POST";
  auto r = t->RoundTrip(post);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.connections(), 2);
}

// A minimal forward proxy on 127.0.0.1: CONNECT requests are tunneled to `target_port` on
// 127.0.0.1 whatever host they name; an absolute-form request is answered by the proxy itself
// with its request line. Records each request's first line and Proxy-Authorization.
class TestProxy {
 public:
  explicit TestProxy(int target_port) : target_port_(target_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~TestProxy() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    for (auto& t : clients_) t.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://user:p%40ss@127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::vector<std::string> auths() const {
    std::lock_guard lock(mu_);
    return auths_;
  }

 private:
  void Loop() {
    while (!stopping_) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      clients_.emplace_back([this, fd] {
        Serve(fd);
        ::close(fd);
      });
    }
  }
  void Serve(int fd) {
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const long n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      head.append(buf, static_cast<std::size_t>(n));
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    std::string auth;
    if (const auto at = head.find("Proxy-Authorization: "); at != std::string::npos) {
      auth = head.substr(at + 21, head.find("\r\n", at) - at - 21);
    }
    {
      std::lock_guard lock(mu_);
      lines_.push_back(line);
      auths_.push_back(auth);
    }
    if (!line.starts_with("CONNECT ")) {
      const std::string body = line;
      const std::string answer =
          "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\n\r\n" + body;
      ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      return;
    }
    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_port_));
    if (::connect(up, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(up);
      return;
    }
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    ::send(fd, ok.data(), ok.size(), MSG_NOSIGNAL);
    pollfd fds[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
    while (!stopping_ && ::poll(fds, 2, 100) >= 0) {
      bool closed = false;
      for (int i = 0; i < 2 && !closed; ++i) {
        if (fds[i].revents == 0) continue;
        const long n = ::recv(fds[i].fd, buf, sizeof buf, 0);
        closed =
            n <= 0 || ::send(fds[1 - i].fd, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n;
      }
      if (closed) break;
    }
    ::close(up);
  }

  int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
  std::vector<std::string> auths_;
  std::vector<std::thread> clients_;  // touched by the accept thread, then by the destructor
  std::thread thread_;
};

// Sets proxy variables for the life of the object (the transport reads them at Create).
class ScopedEnv {
 public:
  ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

// HTTPS_PROXY: an https request to a host outside NO_PROXY goes through an HTTP CONNECT tunnel
// (with the proxy URL's credentials as Basic Proxy-Authorization), TLS inside it; NO_PROXY names
// (a domain and its subdomains) and loopback addresses go direct — net/http's
// ProxyFromEnvironment, as client-go uses, with NO_PROXY matched by libcurl (which also takes a
// leading-dot entry to match the bare domain; see proxy_environment.h).
TEST(TransportTest, HttpsThroughConnectProxyAndNoProxy) {
  const testing::TestPki* pki = testing::TestPki::Get();
  ASSERT_NE(pki, nullptr);
  TestServer server(
      [](const RecordedRequest& r, Conn& c) { c.Respond(200, "{\"path\":\"" + r.path + "\"}"); },
      testing::TlsOptions{pki->server_crt, pki->server_key});
  TestProxy proxy(server.port());
  std::shared_ptr<Transport> t;
  {
    ScopedEnv env({{"HTTPS_PROXY", proxy.url()}, {"NO_PROXY", "direct.test, .sub.test"}});
    RestConfig config;
    config.insecure = true;  // the server's certificate names 127.0.0.1, not the proxied name
    t = NewTransport(config);
  }
  auto r = t->RoundTrip(Get("https://kcm-proxied.test:6443/api/v1"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "{\"path\":\"/api/v1\"}");
  ASSERT_EQ(proxy.lines().size(), 1u);
  EXPECT_EQ(proxy.lines()[0], "CONNECT kcm-proxied.test:6443 HTTP/1.1");
  EXPECT_EQ(proxy.auths()[0], "Basic dXNlcjpwQHNz");  // user:p@ss
  EXPECT_EQ(server.requests().back().Header("host"), "kcm-proxied.test:6443");
  // Kept alive through the tunnel: no second CONNECT.
  ASSERT_TRUE(t->RoundTrip(Get("https://kcm-proxied.test:6443/again")).ok());
  EXPECT_EQ(proxy.lines().size(), 1u);

  // NO_PROXY entries: direct, so the .test names do not resolve (kDNS) and the proxy sees none.
  for (const std::string host : {"direct.test", "a.direct.test", "x.sub.test"}) {
    auto direct = t->RoundTrip(Get("https://" + host + "/"));
    ASSERT_FALSE(direct.ok()) << host;
    EXPECT_EQ(direct.error().transport, TransportCause::kDNS) << direct.error().ToString();
  }
  EXPECT_EQ(proxy.lines().size(), 1u);
  // A name outside NO_PROXY: proxied.
  ASSERT_TRUE(t->RoundTrip(Get("https://other.test/")).ok());
  EXPECT_EQ(proxy.lines().size(), 2u);
  // Loopback is never proxied.
  ASSERT_TRUE(t->RoundTrip(Get(server.url() + "/local")).ok());
  ASSERT_TRUE(t->RoundTrip(Get("https://localhost:1/")).ok() == false);
  EXPECT_EQ(proxy.lines().size(), 2u);
}

// HTTP_PROXY: an http request goes to the proxy in absolute form; a NO_PROXY CIDR keeps an
// address inside it direct.
TEST(TransportTest, HttpThroughProxyInAbsoluteForm) {
  TestProxy proxy(0);
  std::shared_ptr<Transport> t;
  {
    ScopedEnv env({{"http_proxy", proxy.url()}, {"no_proxy", "192.0.2.0/24"}});
    t = NewTransport();
  }
  auto r = t->RoundTrip(Get("http://kcm-proxied.test/api?x=1"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->body, "GET http://kcm-proxied.test/api?x=1 HTTP/1.1");
  EXPECT_EQ(proxy.auths().at(0), "Basic dXNlcjpwQHNz");
  HttpRequest direct = Get("http://192.0.2.7:1/");  // TEST-NET-1: nothing answers
  direct.connect_timeout = 300ms;
  auto d = t->RoundTrip(direct);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(proxy.lines().size(), 1u);
}

// The certificate is checked against the host the URL names: the test server's names only IP
// 127.0.0.1, so "localhost" (which resolves to it) is refused with cause kTLS unless insecure.
// A second connection to the same endpoint resumes the first one's TLS session.
TEST(TransportTest, ServerNameCheckedAndSessionsResumed) {
  const testing::TestPki* pki = testing::TestPki::Get();
  ASSERT_NE(pki, nullptr);
  // Every answer closes its connection, so each request needs a new one.
  TestServer server(
      [](const RecordedRequest&, Conn& c) {
        c.Respond(200, "{}", {{"Connection", "close"}});
        c.Close();
      },
      testing::TlsOptions{pki->server_crt, pki->server_key});
  RestConfig config;
  config.ca_file = pki->ca_crt;
  auto t = NewTransport(config);
  const std::string by_name = "https://localhost:" + std::to_string(server.port()) + "/x";
  auto refused = t->RoundTrip(Get(by_name));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().transport, TransportCause::kTLS) << refused.error().ToString();
  RestConfig insecure = config;
  insecure.insecure = true;
  EXPECT_TRUE(NewTransport(insecure)->RoundTrip(Get(by_name)).ok());

  for (int i = 0; i < 3; ++i) {
    auto r = t->RoundTrip(Get(server.url() + "/x"));
    ASSERT_TRUE(r.ok()) << r.error().ToString();
  }
  EXPECT_EQ(server.connections(), 5);
  EXPECT_GE(server.resumed_sessions(), 2);  // the 2nd and 3rd by IP resumed the 1st's session
}

// HttpStream::Cancel from another thread ends a Read blocked on a silent connection promptly.
TEST(TransportTest, CancelEndsABlockedStreamRead) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk("{}\n");
    c.HoldOpen();
  });
  auto stream = NewTransport()->Stream(Get(server.url() + "/watch"));
  std::string got;
  auto first = stream->Read(&got);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(got, "{}\n");
  std::atomic<bool> canceled{false};
  std::thread canceler([&] {
    std::this_thread::sleep_for(100ms);
    canceled = true;
    stream->Cancel();
  });
  auto second = stream->Read(&got);
  canceler.join();
  EXPECT_TRUE(canceled.load());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, 0u);
  EXPECT_TRUE(stream->canceled());
}

}  // namespace
}  // namespace kcm::client
