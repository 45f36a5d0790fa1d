// The client against a faulty or hostile peer (a broken proxy or load balancer, a compromised
// endpoint), scripted at the byte level: every answer is bounded whatever the request — inflated
// bytes, head bytes, interim answers, Content-Length — and each bound ends the request at once in
// a typed error that names the request, on RoundTrip, on RestClient and on a watch stream alike.
// net/http's Transport is the reference for where the bounds sit (at most 5 interim answers, "bad
// Content-Length", a head limit).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "pkg/api/codec.h"
#include "pkg/api/list_stream.h"
#include "pkg/client/answer_head.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/transport.h"
#include "pkg/client/watch_stream.h"
#include "test/unit/client/test_server.h"
#include "test/unit/client/transport_testing.h"

namespace kcm::client {
namespace {

using namespace std::chrono_literals;
using testing::Conn;
using testing::Get;
using testing::GzipBomb;
using testing::NewTransport;
using testing::RecordedRequest;
using testing::TestServer;

// Far under any test's own timeout: "ended by a bound, not by a deadline or a hang".
constexpr auto kPrompt = 10s;

std::chrono::steady_clock::duration Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::steady_clock::now() - t;
}

std::shared_ptr<RestClient> Client(const std::string& host, std::size_t max_object_bytes) {
  RestConfig config;
  config.host = host;
  config.qps = -1;
  config.max_object_bytes = max_object_bytes;
  auto c = RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

// A gzip answer that inflates to 64 times the limit (a fraction of it on the wire) stops at the
// request's own limit, counted inflated: a /healthz-style GET at RestConfig::max_object_bytes, a
// LIST item at the same bound through the streamed LIST, an error answer to a streamed LIST too.
TEST(HostilePeerTest, GzipBombStopsAtTheRequestsLimit) {
  const std::string bomb = GzipBomb(std::size_t{64} << 20);
  ASSERT_LT(bomb.size(), std::size_t{1} << 20);
  // A pod list whose first item never ends.
  const std::string list_bomb = GzipBomb(
      std::size_t{64} << 20,
      R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":")", 'a');
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    const bool list = r.path == "/api/v1/namespaces/default/pods";
    const int status = r.query.find("error") != std::string::npos ? 500 : 200;
    c.Respond(status, list && status == 200 ? list_bomb : bomb, {{"Content-Encoding", "gzip"}});
  });
  auto client = Client(server.url(), 1 << 20);
  ASSERT_NE(client, nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  auto healthz = client->Do({.verb = "GET", .path = "/healthz"});
  ASSERT_FALSE(healthz.ok());
  EXPECT_EQ(healthz.error().transport, TransportCause::kTooLarge) << healthz.error().ToString();
  EXPECT_NE(healthz.error().message.find("GET " + server.url() + "/healthz: "), std::string::npos)
      << healthz.error().message;
  EXPECT_LT(Since(t0), kPrompt);

  // The transport hands a 2xx body to the sink, whose own item bound (the LIST decoder's, set
  // to max_object_bytes as the informers set it) stops it.
  struct Decode : BodySink {
    std::optional<api::ListStreamDecoder> decoder;
    void Begin(std::string_view) override {
      decoder.emplace(api::PodCodec(), api::ListEncoding::kJson, std::size_t{1} << 20);
    }
    Status Write(std::string_view data) override { return decoder->Feed(data); }
  };
  ResourceClient pods(client, {"", "v1", "pods"}, true);
  Decode decode;
  auto list = pods.ListStreaming("default", {}, decode);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("limit"), std::string::npos) << list.error().ToString();
  ASSERT_TRUE(decode.decoder.has_value());
  EXPECT_LE(decode.decoder->peak_buffered_bytes(), std::size_t{2} << 20);
  EXPECT_LT(Since(t0), kPrompt);

  struct Discard : BodySink {
    void Begin(std::string_view) override {}
    Status Write(std::string_view) override { return OkStatus(); }
  };
  Discard discard;
  // An error answer is read to its own, smaller bound: the answer is the error, its text cut.
  auto error_answer = client->Do(
      {.verb = "GET", .path = "/api/v1/pods", .query = {{"error", "1"}}, .body_sink = &discard});
  ASSERT_FALSE(error_answer.ok());
  EXPECT_EQ(error_answer.error().code, 500) << error_answer.error().ToString();
  EXPECT_NE(error_answer.error().message.find("[truncated]"), std::string::npos);
  EXPECT_LT(error_answer.error().message.size(), kMaxErrorTextBytes + 100);
  EXPECT_LT(Since(t0), kPrompt);
}

// An error answer whose body never ends — to a request, to a streamed LIST, to a watch — is read
// to internal::kMaxErrorBodyBytes and no further: the connection is dropped, not drained, and the
// error keeps the text's first kMaxErrorTextBytes with a visible cut: upstream's
// transformUnstructuredResponseError reads at most maxUnstructuredResponseTextBytes of a watch's
// error answer, and newUnstructuredResponseError keeps no more of any text.
TEST(HostilePeerTest, EndlessErrorBodyIsReadToItsBoundOnly) {
  std::atomic<std::size_t> most_sent{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.StartChunked(500, {{"Content-Type", "text/plain"}});
    const std::string block(64 << 10, 'e');
    std::size_t sent = 0;
    while (sent < (std::size_t{1} << 30) && c.WriteAll("10000\r\n" + block + "\r\n")) {
      sent += block.size();
    }
    std::size_t prev = most_sent.load();
    while (sent > prev && !most_sent.compare_exchange_weak(prev, sent)) {
    }
  });
  auto client = Client(server.url(), std::size_t{16} << 20);
  ASSERT_NE(client, nullptr);
  auto expect_cut = [&](const Error& e, const std::string& what) {
    EXPECT_EQ(e.code, 500) << what << ": " << e.ToString();
    EXPECT_EQ(e.transport, TransportCause::kNone) << what << ": " << e.ToString();
    EXPECT_NE(e.message.find("eeee [truncated])"), std::string::npos) << what;
    EXPECT_LT(e.message.size(), kMaxErrorTextBytes + 100) << what;
  };

  const auto t0 = std::chrono::steady_clock::now();
  auto get = client->Do({.verb = "GET", .path = "/api/v1/namespaces/default/pods/p"});
  ASSERT_FALSE(get.ok());
  expect_cut(get.error(), "GET");
  auto post = client->Do({.verb = "POST", .path = "/api/v1/namespaces/default/pods", .body = "{}"});
  ASSERT_FALSE(post.ok());
  expect_cut(post.error(), "POST");

  auto watch = client->Watch({.verb = "GET", .path = "/api/v1/pods", .query = {{"watch", "true"}}});
  ASSERT_TRUE(watch.ok()) << watch.error().ToString();
  auto frame = (*watch)->Next();
  ASSERT_FALSE(frame.ok());
  expect_cut(frame.error(), "WATCH");
  EXPECT_LT(Since(t0), kPrompt);

  // What the server got written before the client stopped reading: the bound plus what the
  // loopback socket buffers hold, far under the 1 GiB it would have sent.
  const auto wait = std::chrono::steady_clock::now();
  while (most_sent.load() == 0 && Since(wait) < kPrompt) std::this_thread::sleep_for(10ms);
  EXPECT_GT(most_sent.load(), 0u);
  EXPECT_LT(most_sent.load(), std::size_t{32} << 20);
}

// Interim (1xx) answers without end: refused after the fifth, not read forever on a busy core.
TEST(HostilePeerTest, EndlessInterimAnswersAreRefused) {
  std::atomic<int> sent{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    while (!c.closed() && c.WriteAll("HTTP/1.1 100 Continue\r\n\r\n")) {
      if (++sent > 100000) break;
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = NewTransport()->RoundTrip(Get(server.url() + "/api"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kOther) << r.error().ToString();
  EXPECT_NE(r.error().message.find("interim answers"), std::string::npos) << r.error().message;
  EXPECT_LT(Since(t0), kPrompt);

  // A few interim answers before the real one are fine.
  TestServer polite([](const RecordedRequest&, Conn& c) {
    c.WriteAll("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n");
    c.Respond(200, "{}");
  });
  auto ok = NewTransport()->RoundTrip(Get(polite.url() + "/api"));
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "{}");
}

// A Content-Length that is negative, not a number, or said twice differently ends the request at
// once ("bad Content-Length"), instead of a read until the connection closes; one over the
// request's limit is refused before any body byte is kept.
TEST(HostilePeerTest, MalformedOrOversizedContentLengthIsRefusedAtOnce) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
    if (r.path == "/negative") head += "Content-Length: -1\r\n";
    if (r.path == "/junk") head += "Content-Length: 12abc\r\n";
    if (r.path == "/twice") head += "Content-Length: 2\r\nContent-Length: 3\r\n";
    if (r.path == "/huge") head += "Content-Length: 999999999999\r\n";
    c.WriteAll(head + "\r\n{}");
    c.HoldOpen();  // never closes: only a bound ends the request
  });
  auto t = NewTransport();
  for (const std::string path : {"/negative", "/junk", "/twice"}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = t->RoundTrip(Get(server.url() + path));
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error().transport, TransportCause::kOther) << r.error().ToString();
    EXPECT_NE(r.error().message.find("Content-Length"), std::string::npos) << r.error().message;
    EXPECT_LT(Since(t0), kPrompt) << path;
  }
  HttpRequest huge = Get(server.url() + "/huge");
  huge.max_body_bytes = 1 << 20;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = t->RoundTrip(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kTooLarge) << r.error().ToString();
  EXPECT_LT(Since(t0), kPrompt);
}

// A head that never ends (one header line after another) stops at kMaxAnswerHeadBytes; so does
// a watch stream's.
TEST(HostilePeerTest, EndlessHeadStopsAtItsLimit) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.WriteAll("HTTP/1.1 200 OK\r\n");
    const std::string line = "X-Filler: " + std::string(1000, 'a') + "\r\n";
    for (std::size_t sent = 0; sent < 4 * kMaxAnswerHeadBytes && c.WriteAll(line);) {
      sent += line.size();
    }
  });
  auto t = NewTransport();
  auto r = t->RoundTrip(Get(server.url() + "/api"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kOther) << r.error().ToString();
  EXPECT_NE(r.error().message.find("head over"), std::string::npos) << r.error().message;

  auto stream = t->Stream(Get(server.url() + "/watch"));
  std::string got;
  Result<size_t> n = size_t{0};
  do {
    n = stream->Read(&got);
  } while (n.ok() && *n > 0);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("head over"), std::string::npos) << n.error().message;
  EXPECT_TRUE(got.empty());
}

// A body with no length that never ends (read until close) stops at the request's limit.
TEST(HostilePeerTest, EndlessBodyStopsAtItsLimit) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.WriteAll("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    const std::string block(64 << 10, 'x');
    for (int i = 0; i < 1024 && c.WriteAll(block); ++i) {
    }
  });
  HttpRequest req = Get(server.url() + "/api");
  req.max_body_bytes = 1 << 20;
  auto r = NewTransport()->RoundTrip(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().transport, TransportCause::kTooLarge) << r.error().ToString();
}

// Chunk sizes of 20 hex digits or negative, and a garbage status line, are errors, not
// allocations or hangs.
TEST(HostilePeerTest, MalformedFramingIsAnError) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.path == "/status") {
      c.WriteAll("HTPT/1.1 2OO OK\r\n\r\n{}");
    } else {
      c.WriteAll("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      c.WriteAll(r.path == "/long" ? "fffffffffffffffffffff\r\n" : "-5\r\n");
    }
    c.HoldOpen();
  });
  auto t = NewTransport();
  for (const std::string path : {"/long", "/negative", "/status"}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = t->RoundTrip(Get(server.url() + path));
    EXPECT_FALSE(r.ok()) << path;
    EXPECT_LT(Since(t0), kPrompt) << path;
  }
}

// An answer nobody asked for, sent with (or after) the real one, is never taken for the next
// request's answer: the connection it came on is not used again (net/http's persistConn closes
// it too). Sent in one write with the real answer, and on its own after a pause.
TEST(HostilePeerTest, UnaskedAnswerIsNeverTheNextRequestsAnswer) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.path == "/together") {
      c.WriteAll(
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
          "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nunasked");
    } else if (r.path == "/after") {
      c.Respond(200, "{}");
      std::this_thread::sleep_for(50ms);
      c.WriteAll("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nunasked");
    } else {
      c.Respond(200, "own answer");
    }
  });
  auto t = NewTransport();
  for (const std::string path : {"/together", "/after"}) {
    auto first = t->RoundTrip(Get(server.url() + path));
    ASSERT_TRUE(first.ok()) << first.error().ToString();
    EXPECT_EQ(first->body, "{}");
    std::this_thread::sleep_for(100ms);
    HttpRequest post = Get(server.url() + "/next");
    post.method = "POST";
    post.body = "{}";
    auto next = t->RoundTrip(post);
    ASSERT_TRUE(next.ok()) << path << ": " << next.error().ToString();
    EXPECT_EQ(next->body, "own answer") << path;
  }
}

// The bounds one line at a time, as libcurl hands the lines over.
TEST(AnswerHeadTest, KeepsTheFinalAnswersHeadersAndRefusesWhatIsUnbounded) {
  AnswerHead head;
  ASSERT_TRUE(head.Add("HTTP/1.1 100 Continue\r\n").ok());
  ASSERT_TRUE(head.Add("Retry-After: 9\r\n").ok());
  ASSERT_TRUE(head.Add("\r\n").ok());
  ASSERT_TRUE(head.Add("HTTP/1.1 429 Too Many Requests\r\n").ok());
  ASSERT_TRUE(head.Add("content-type:  application/json \r\n").ok());
  ASSERT_TRUE(head.Add("Content-Length: 17\r\n").ok());
  ASSERT_TRUE(head.Add("CONTENT-LENGTH: 17\r\n").ok());  // the same twice is allowed
  EXPECT_EQ(head.retry_after(), "");                     // the interim answer's is forgotten
  EXPECT_EQ(head.content_type(), "application/json");
  EXPECT_EQ(head.content_length(), 17u);

  AnswerHead interim;
  for (int i = 0; i <= kMaxInterimAnswers; ++i) {
    ASSERT_TRUE(interim.Add("HTTP/1.1 100 Continue\r\n").ok()) << i;
  }
  EXPECT_FALSE(interim.Add("HTTP/1.1 100 Continue\r\n").ok());

  for (const char* bad : {"Content-Length: -1\r\n", "Content-Length: 1 2\r\n",
                          "Content-Length: \r\n", "Content-Length: 99999999999999999999\r\n"}) {
    AnswerHead h;
    EXPECT_FALSE(h.Add(bad).ok()) << bad;
  }
  AnswerHead big;
  const std::string line(64 << 10, 'x');
  Status s = OkStatus();
  for (int i = 0; i < 5 && s.ok(); ++i) s = big.Add(line);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace kcm::client
