// Streams on the loop (docs/design/client-transport.md, "Byte channel and backpressure"): a
// watch's and a streamed LIST's bytes cross to their reader in a byte channel that holds at most
// ByteChannel::kMaxHeld + 16 KiB (a full channel pauses the transfer, the reader's take resumes
// it), a paused LIST is not failed by the stall limit, Cancel wakes a blocked Read at once, and
// streams never hold a request's place under RequestMulti's cap.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/client/internal/byte_channel.h"
#include "pkg/client/internal/event_loop.h"
#include "pkg/client/transport.h"
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

// What libcurl keeps of a refused chunk: at most CURLOPT_BUFFERSIZE (16 KiB by default).
constexpr std::size_t kMostHeld = internal::ByteChannel::kMaxHeld + (std::size_t{16} << 10);

// The byte at offset `i` of a test body: not periodic at any chunk size the tests use, so a lost,
// doubled or reordered chunk shows.
char PatternByte(std::size_t i) {
  return static_cast<char>((i * 131 + i / 4093) & 0xff);
}

std::string Pattern(std::size_t from, std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t k = 0; k < n; ++k) s[k] = PatternByte(from + k);
  return s;
}

// Index of the first byte of `got` (which starts at offset `from` of the pattern) that differs.
std::size_t FirstMismatch(const std::string& got, std::size_t from) {
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (got[k] != PatternByte(from + k)) return k;
  }
  return got.size();
}

// A watch of 12 MiB sent as fast as the connection takes it, read by a reader that sleeps after
// every Read: each Read takes the whole channel, which never held more than kMaxHeld + 16 KiB,
// the transfer was paused (a Read found the channel at its bound) and every byte arrived in order.
// Upstream's StreamWatcher.receive holds its stream the same way: it blocks on its unbuffered
// result channel until the reflector takes the event, and TCP flow control holds the server; our
// channel adds a bound of its own, so the loop never blocks on one reader.
TEST(StreamChannelTest, SlowReaderKeepsTheChannelBoundedAndLosesNothing) {
  constexpr std::size_t kTotal = std::size_t{12} << 20;
  constexpr std::size_t kChunk = std::size_t{64} << 10;
  std::atomic<std::size_t> server_sent{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    for (std::size_t sent = 0; sent < kTotal; sent += kChunk) {
      c.Chunk(Pattern(sent, kChunk));
      server_sent = sent + kChunk;
    }
    c.EndChunked();
  });
  auto stream = NewTransport()->Stream(Get(server.url() + "/watch"));
  // Before the first Read, until the server is held up: it stops only when the client stops
  // draining the socket, which the loop does only once the channel paused the transfer, full.
  // A server making no progress for 300 ms is taken as held (bounded by 10 s), not a sleep of a
  // fixed length, which a loaded machine can outrun.
  {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    std::size_t last = 0;
    auto since = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() < deadline && server_sent.load() < kTotal) {
      if (server_sent.load() != last) {
        last = server_sent.load();
        since = std::chrono::steady_clock::now();
      } else if (last > internal::ByteChannel::kMaxHeld &&
                 std::chrono::steady_clock::now() - since > 300ms) {
        break;
      }
      std::this_thread::sleep_for(5ms);
    }
  }
  std::size_t received = 0;
  std::size_t largest = 0;
  std::string got;
  while (true) {
    got.clear();
    auto n = stream->Read(&got);
    ASSERT_TRUE(n.ok()) << n.error().ToString();
    if (*n == 0) break;
    ASSERT_EQ(*n, got.size());
    ASSERT_EQ(FirstMismatch(got, received), got.size()) << "at offset " << received;
    received += *n;
    largest = std::max(largest, *n);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(received, kTotal);
  EXPECT_LE(largest, kMostHeld);
  EXPECT_GE(largest, internal::ByteChannel::kMaxHeld) << "the channel never filled: no pause";
  EXPECT_EQ(stream->status(), 200);
}

// A streamed LIST whose sink is slower than the server: the transfer pauses at the channel's
// bound for longer than the stall limit (2 s at 1 KiB/s) and is not failed by it: a paused
// transfer is not checked for speed. Every byte reaches the sink, in order, begun once.
TEST(StreamChannelTest, PausedListIsNotFailedByTheStallLimit) {
  constexpr std::size_t kTotal = std::size_t{6} << 20;
  const std::string body = Pattern(0, kTotal);
  TestServer server([&](const RecordedRequest&, Conn& c) { c.Respond(200, body); });
  struct SlowSink : BodySink {
    std::string got;
    int begins = 0;
    int writes = 0;
    void Begin(std::string_view) override {
      ++begins;
      got.clear();
    }
    Status Write(std::string_view data) override {
      got.append(data);
      // The first write sleeps past the stall limit while the channel fills and pauses.
      if (++writes == 1) std::this_thread::sleep_for(4s);
      return Status();
    }
  } sink;
  HttpRequest req = Get(server.url() + "/api/v1/pods");
  req.stall_timeout = 2s;
  req.stall_bytes_per_second = 1024;
  req.body_sink = &sink;
  auto t = NewTransport();
  auto resp = t->RoundTrip(req);
  ASSERT_TRUE(resp.ok()) << resp.error().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(sink.begins, 1);
  EXPECT_EQ(sink.got.size(), kTotal);
  EXPECT_EQ(FirstMismatch(sink.got, 0), sink.got.size());
  EXPECT_GT(sink.writes, 1);
}

// A server that accepts and never answers still trips the stall limit of a streamed LIST: the
// exemption is for a transfer its reader paused, not for a silent peer.
TEST(StreamChannelTest, SilentServerStillTripsAStreamedListsStallLimit) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.HoldOpen(); });
  struct Discard : BodySink {
    void Begin(std::string_view) override {}
    Status Write(std::string_view) override { return Status(); }
  } sink;
  HttpRequest req = Get(server.url() + "/api/v1/pods");
  req.stall_timeout = 1s;
  req.body_sink = &sink;
  auto resp = NewTransport()->RoundTrip(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.error().transport, TransportCause::kTimedOut) << resp.error().ToString();
}

// Cancel() wakes a Read blocked on an empty channel at once, and a stream canceled while paused
// (its channel full, its reader gone) ends and is destroyed without waiting for the server.
TEST(StreamChannelTest, CancelWakesABlockedReadAtOnceAndEndsAPausedStream) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    c.StartChunked(200);
    if (r.path == "/flood") {
      for (std::size_t i = 0; i < 256 && !c.closed(); ++i) {
        if (!c.WriteAll("10000\r\n" + std::string(std::size_t{64} << 10, 'x') + "\r\n")) break;
      }
    } else {
      c.Chunk("{}\n");
    }
    c.HoldOpen();
  });
  auto t = NewTransport();
  auto stream = t->Stream(Get(server.url() + "/watch"));
  std::string got;
  ASSERT_TRUE(stream->Read(&got).ok());
  EXPECT_EQ(got, "{}\n");
  std::chrono::steady_clock::time_point canceled_at;
  std::thread canceler([&] {
    std::this_thread::sleep_for(200ms);
    canceled_at = std::chrono::steady_clock::now();
    stream->Cancel();
  });
  auto second = stream->Read(&got);
  const auto woke_at = std::chrono::steady_clock::now();
  canceler.join();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, 0u);
  // A liveness bound, not a speed check: the server holds the stream open for ever, so a Read
  // that waited for anything but Cancel would not return at all.
  EXPECT_LT(woke_at - canceled_at, 5s) << "the blocked Read did not end on Cancel";

  auto flood = t->Stream(Get(server.url() + "/flood"));
  got.clear();
  auto first = flood->Read(&got);
  ASSERT_TRUE(first.ok());
  std::this_thread::sleep_for(300ms);  // the channel fills and the transfer pauses
  flood->Cancel();
  got.clear();
  auto after = flood->Read(&got);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(*after, 0u);
  const auto start = std::chrono::steady_clock::now();
  flood.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

// 40 watches held open on one Transport (more than RequestMulti::kMaxRequests) and requests
// sent meanwhile: every request is answered, none waits for a watch to end.
TEST(StreamChannelTest, ManyStreamsDoNotStarveRequests) {
  constexpr int kStreams = 40;
  constexpr int kRequests = 2 * internal::RequestMulti::kMaxRequests;
  static_assert(kStreams > static_cast<int>(internal::RequestMulti::kMaxRequests));
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.path == "/watch") {
      c.StartChunked(200);
      c.Chunk("{}\n");
      c.HoldOpen();
    } else {
      c.Respond(200, "{\"ok\":true}");
    }
  });
  auto t = NewTransport();
  std::vector<std::unique_ptr<HttpStream>> streams;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(t->Stream(Get(server.url() + "/watch")));
    std::string got;
    auto n = streams.back()->Read(&got);
    ASSERT_TRUE(n.ok()) << n.error().ToString();
    ASSERT_EQ(got, "{}\n") << "stream " << i;
  }
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::stop_source give_up;
  std::vector<HttpRequest> requests(kRequests, Get(server.url() + "/api/v1/namespaces/a"));
  std::vector<std::unique_ptr<PendingRoundTrip>> pending;
  for (auto& req : requests) {
    pending.push_back(t->Submit(req, give_up.get_token(), [&] {
      std::lock_guard lock(mu);
      ++done;
      cv.notify_one();
    }));
  }
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, 10s, [&] { return done == kRequests; }))
        << done << " of " << kRequests << " requests answered while " << kStreams
        << " watches are open";
  }
  give_up.request_stop();
  int ok = 0;
  for (auto& p : pending) {
    auto resp = p->Wait();
    if (resp.ok() && resp->status == 200) ++ok;
  }
  EXPECT_EQ(ok, kRequests);
  for (auto& s : streams) s->Cancel();
}

}  // namespace
}  // namespace kcm::client
