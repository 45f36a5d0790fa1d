// Client deadlines and size limits against a scripted server: every non-watch request ends in
// bounded time when the server stalls (no answer, or a trickle), a watch ends at its
// timeoutSeconds + margin, and neither an answer nor a watch frame is held past
// RestConfig::max_object_bytes. Failures carry their typed TransportCause.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "pkg/client/json_frame_scanner.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/transport.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using namespace std::chrono_literals;
using testing::Conn;
using testing::RecordedRequest;
using testing::TestServer;

const GroupVersionResource kPods{"", "v1", "pods"};

// A generous bound for "ended by its deadline rather than hanging"; the deadlines below are 1–3 s.
constexpr auto kHangBound = 20s;

std::shared_ptr<RestClient> Client(RestConfig config) {
  config.qps = -1;
  auto c = RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

std::chrono::steady_clock::duration Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::steady_clock::now() - t;
}

// The causes the reflector's decisions rest on, each from a real failure: a name that does not
// resolve (kDNS), a port nobody listens on (kConnectionRefused), a server that closes the
// connection without answering (kConnectionReset). Each message names the request.
TEST(TransportCauseTest, FromRealFailures) {
  auto transport = Transport::Create(RestConfig{});
  ASSERT_TRUE(transport.ok()) << transport.error().ToString();
  HttpRequest dns;
  dns.url = "http://kcm-no-such-host.invalid/api";
  auto r = (*transport)->RoundTrip(dns);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kDNS) << r.error().ToString();
  EXPECT_NE(r.error().message.find("GET http://kcm-no-such-host.invalid/api: "), std::string::npos)
      << r.error().message;

  int port = 0;
  {
    TestServer gone([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
    port = gone.port();
  }
  HttpRequest refused;
  refused.url = "http://127.0.0.1:" + std::to_string(port) + "/api";
  r = (*transport)->RoundTrip(refused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kConnectionRefused) << r.error().ToString();

  TestServer closer([](const RecordedRequest&, Conn& c) { c.Close(); });
  HttpRequest reset;
  reset.url = closer.url() + "/api";
  r = (*transport)->RoundTrip(reset);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kConnectionReset) << r.error().ToString();
  EXPECT_EQ(closer.requests().size(), 1u);  // a fresh connection: never resent
}

// A LIST to a server that accepts the request and never answers fails once the stall limit
// passes, with cause kTimedOut and a message naming the request; it is not resent by the client
// (the caller's backoff decides, as with upstream's timeouts).
TEST(DeadlineTest, ListThatNeverAnswersTimesOut) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.HoldOpen(); });
  ResourceClient pods(Client({.host = server.url(), .stall_timeout = 1s}), kPods, true);
  const auto start = std::chrono::steady_clock::now();
  auto r = pods.List("ns", {});
  ASSERT_FALSE(r.ok());
  EXPECT_LT(Since(start), kHangBound);
  EXPECT_EQ(r.error().transport, TransportCause::kTimedOut) << r.error().ToString();
  EXPECT_TRUE(errors::IsClientTimeout(r.error()));
  EXPECT_FALSE(errors::IsTimeout(r.error()));  // not the server's 504
  EXPECT_NE(r.error().message.find("GET " + server.url() + "/api/v1/namespaces/ns/pods"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(server.requests().size(), 1u);
}

// A server that sends its answer one byte per second is below the stall rate: the request fails
// with kTimedOut instead of trickling on for 1000 s.
TEST(DeadlineTest, OneBytePerSecondTimesOut) {
  TestServer server([&](const RecordedRequest&, Conn& c) {
    if (!c.WriteAll("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    "Content-Length: 1000\r\n\r\n")) {
      return;
    }
    for (int i = 0; i < 60 && !server.stopping(); ++i) {
      if (!c.WriteAll(" ")) return;  // the client gave up
      std::this_thread::sleep_for(1s);
    }
  });
  auto client = Client({.host = server.url(), .stall_timeout = 2s, .stall_bytes_per_second = 16});
  const auto start = std::chrono::steady_clock::now();
  auto r = client->Do({.path = "/api/v1/pods"});
  ASSERT_FALSE(r.ok());
  EXPECT_LT(Since(start), kHangBound);
  EXPECT_EQ(r.error().transport, TransportCause::kTimedOut) << r.error().ToString();
}

// The overall config timeout also ends a stalled request (cause kTimedOut).
TEST(DeadlineTest, ConfigTimeoutBoundsARequest) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.HoldOpen(); });
  auto client = Client({.host = server.url(), .timeout = 500ms});
  auto r = client->Do({.path = "/api/v1/pods"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kTimedOut) << r.error().ToString();
}

// A watch asked with timeoutSeconds=1 on a server that sends headers and then nothing (a dead
// stream) is ended by the client at 1 s + margin with kTimedOut; nothing was lost, so it is a
// transport error, not a decoding one.
TEST(DeadlineTest, SilentWatchEndsAtTimeoutPlusMargin) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.HoldOpen();
  });
  ResourceClient pods(Client({.host = server.url(), .watch_timeout_margin = 1s}), kPods, true);
  api::ListOptions opts;
  opts.timeout_seconds = 1;
  auto w = pods.Watch("ns", opts);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  const auto start = std::chrono::steady_clock::now();
  auto e = (*w)->Next();
  ASSERT_FALSE(e.ok());
  EXPECT_LT(Since(start), kHangBound);
  EXPECT_EQ(e.error().transport, TransportCause::kTimedOut) << e.error().ToString();
  EXPECT_EQ(server.requests().at(0).query.find("timeoutSeconds=1") != std::string::npos, true);
}

// A single-object answer over max_object_bytes fails with kTooLarge; a LIST page is not capped.
TEST(SizeLimitTest, ObjectAnswerOverTheLimit) {
  const std::string big = R"({"kind":"Pod","pad":")" + std::string(4096, 'x') + R"("})";
  TestServer server([&](const RecordedRequest&, Conn& c) { c.Respond(200, big); });
  ResourceClient pods(Client({.host = server.url(), .max_object_bytes = 1024}), kPods, true);
  auto got = pods.Get("ns", "p");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().transport, TransportCause::kTooLarge) << got.error().ToString();
  auto list = pods.List("ns", {});
  EXPECT_TRUE(list.ok()) << list.error().ToString();
}

// The frame scanner never holds more than the limit of an unfinished frame, however the stream is
// cut; frames before the oversized one are delivered, then the kTooLarge error.
TEST(SizeLimitTest, FrameScannerBufferStaysUnderTheLimit) {
  constexpr std::size_t kLimit = 4096;
  const std::string small = R"({"type":"ADDED","object":{"kind":"Pod"}})";
  const std::string exact =
      R"({"p":")" + std::string(kLimit - 8, 'y') + R"("})";  // exactly kLimit bytes
  ASSERT_EQ(exact.size(), kLimit);
  const std::string huge = R"({"type":"ADDED","object":{"pad":")" + std::string(100000, 'z');
  for (std::size_t chunk : {1u, 7u, 1000u, 65536u}) {
    JsonFrameScanner s(kLimit);
    const std::string stream = small + "\n" + exact + "\n" + huge;
    std::vector<std::string> frames;
    std::optional<Error> err;
    for (std::size_t off = 0; off < stream.size() && !err; off += chunk) {
      s.Feed(std::string_view(stream).substr(off, chunk));
      ASSERT_LE(s.partial_bytes(), kLimit) << "chunk " << chunk << " offset " << off;
      while (true) {
        auto f = s.Next();
        if (!f.ok()) {
          err = f.error();
          break;
        }
        if (!f->has_value()) break;
        frames.push_back(**f);
      }
    }
    ASSERT_EQ(frames, (std::vector<std::string>{small, exact})) << "chunk " << chunk;
    ASSERT_TRUE(err.has_value()) << "chunk " << chunk;
    EXPECT_EQ(err->transport, TransportCause::kTooLarge) << err->ToString();
    EXPECT_EQ(s.partial_bytes(), 0u);
  }
}

// An oversized watch frame on the wire ends the watch with kTooLarge after the frames before it,
// and the stream never buffered more than the limit.
TEST(SizeLimitTest, OversizedWatchFrame) {
  constexpr std::size_t kLimit = 64 * 1024;
  const std::string first = R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a"}}})";
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(first + "\n");
    c.Chunk(R"({"type":"ADDED","object":{"kind":"Pod","pad":")");
    const std::string piece(16 * 1024, 'z');
    for (int i = 0; i < 64 && !c.closed() && !server.stopping(); ++i) c.Chunk(piece);  // 1 MiB
    c.HoldOpen();
  });
  ResourceClient pods(Client({.host = server.url(), .max_object_bytes = kLimit}), kPods, true);
  auto w = pods.Watch("ns", {});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto e1 = (*w)->Next();
  ASSERT_TRUE(e1.ok() && e1->has_value()) << (e1.ok() ? "end" : e1.error().ToString());
  EXPECT_EQ(**e1, first);
  auto e2 = (*w)->Next();
  ASSERT_FALSE(e2.ok());
  EXPECT_EQ(e2.error().transport, TransportCause::kTooLarge) << e2.error().ToString();
  EXPECT_LE((*w)->buffered_bytes(), kLimit);
  auto e3 = (*w)->Next();  // ended for good
  EXPECT_TRUE(e3.ok() && !e3->has_value());
}

}  // namespace
}  // namespace kcm::client
