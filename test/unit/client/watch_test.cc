#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "pkg/client/api_errors.h"
#include "pkg/client/json_frame_scanner.h"
#include "pkg/client/length_frame_scanner.h"
#include "pkg/client/resource_client.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::Conn;
using testing::RecordedRequest;
using testing::TestServer;

const std::string kAdded =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a}{\"b"}}})";
const std::string kModified = R"({"type":"MODIFIED","object":{"kind":"Pod","x":[1,{"y":"]"}]}})";
const std::string kError =
    R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})";

std::vector<std::string> Drain(JsonFrameScanner& s) {
  std::vector<std::string> out;
  while (true) {
    auto f = s.Next();
    EXPECT_TRUE(f.ok());
    if (!f.ok() || !f->has_value()) return out;
    out.push_back(**f);
  }
}

// The frames of stream fed to s in two reads, cut at byte cut.
std::vector<std::string> FeedCutAt(JsonFrameScanner& s, const std::string& stream,
                                   std::size_t cut) {
  s.Feed(stream.substr(0, cut));
  auto frames = Drain(s);
  s.Feed(stream.substr(cut));
  for (auto& f : Drain(s)) frames.push_back(f);
  return frames;
}

// 1.8 frames split at every possible byte, with strings holding braces and escaped quotes.
TEST(JsonFrameScannerTest, FramesSplitAcrossReads) {
  const std::string stream = kAdded + "\n" + kModified + "\n";
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    JsonFrameScanner s;
    const auto frames = FeedCutAt(s, stream, cut);
    ASSERT_EQ(frames, (std::vector<std::string>{kAdded, kModified})) << "cut at " << cut;
    EXPECT_FALSE(s.HasPartial());
  }
}

// A string ending in an escaped backslash ends at the next quote, and one holding an escaped quote
// does not; the brackets inside either are text. Split at every byte (the scanner skips a
// string's body and the bytes between brackets in runs, which a cut may end anywhere).
TEST(JsonFrameScannerTest, EscapesAtRunEndsSplitAnywhere) {
  const std::string a = R"({"a":"x\\","b":"}]\"{[","c":[true,{"d":null}],"e":"\\\\"})";
  const std::string b = R"({"f":1.5e3,"g":"\\\""})";
  const std::string stream = a + b + " \n";
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    JsonFrameScanner s;
    const auto frames = FeedCutAt(s, stream, cut);
    ASSERT_EQ(frames, (std::vector<std::string>{a, b})) << "cut at " << cut;
    EXPECT_FALSE(s.HasPartial());
  }
}

// 1.8 values back to back, and several in one read.
TEST(JsonFrameScannerTest, BackToBackAndManyPerRead) {
  JsonFrameScanner s;
  s.Feed(kAdded + kModified + "\r\n  " + kError);
  EXPECT_EQ(Drain(s), (std::vector<std::string>{kAdded, kModified, kError}));
  s.Feed(R"({"type":"ADDED")");
  EXPECT_TRUE(Drain(s).empty());
  EXPECT_TRUE(s.HasPartial());
}

// The complete frames of a read are counted until handed out; an unfinished one is not.
TEST(JsonFrameScannerTest, ReadyFramesCountsCompleteFramesNotYetReturned) {
  JsonFrameScanner s;
  EXPECT_EQ(s.ready_frames(), 0u);
  s.Feed(kAdded + kModified + "\n" + kError.substr(0, 12));
  EXPECT_EQ(s.ready_frames(), 2u);
  ASSERT_TRUE(s.Next().ok());
  EXPECT_EQ(s.ready_frames(), 1u);
  ASSERT_TRUE(s.Next().ok());
  EXPECT_EQ(s.ready_frames(), 0u);
  EXPECT_TRUE(s.HasPartial());
  s.Feed(kError.substr(12));
  EXPECT_EQ(s.ready_frames(), 1u);
}

// 1.8 garbage between frames is a ClientWatchDecoding error.
TEST(JsonFrameScannerTest, GarbageIsDecodingError) {
  JsonFrameScanner s;
  s.Feed(kAdded + "\nnot json");
  ASSERT_TRUE(s.Next().ok());
  auto bad = s.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, 500);
  EXPECT_EQ(bad.error().reason, errors::reason::kClientWatchDecoding);
}

// The protobuf watch framing: a 4-byte big-endian length, then the frame's bytes (any bytes).
std::string LengthPrefixed(std::string_view frame) {
  std::string out(4, '\0');
  const auto n = static_cast<uint32_t>(frame.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * (3 - i))) & 0xff);
  return out + std::string(frame);
}

const std::string kBinary1(
    "\x0a\x05"
    "ADDED\x12\x00\x7b\x00",
    11);
const std::string kBinary2(300, '\x80');  // a length with a non-zero second byte

std::vector<std::string> Drain(LengthFrameScanner& s) {
  std::vector<std::string> out;
  while (true) {
    auto f = s.Next();
    EXPECT_TRUE(f.ok());
    if (!f.ok() || !f->has_value()) return out;
    out.push_back(**f);
  }
}

// Length-prefixed frames split at every possible byte, several per read, empty frames.
TEST(LengthFrameScannerTest, FramesSplitAcrossReads) {
  const std::string stream =
      LengthPrefixed(kBinary1) + LengthPrefixed(kBinary2) + LengthPrefixed("");
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    LengthFrameScanner s;
    s.Feed(stream.substr(0, cut));
    auto frames = Drain(s);
    const std::size_t one = LengthPrefixed(kBinary1).size();
    const std::size_t two = one + LengthPrefixed(kBinary2).size();
    EXPECT_EQ(s.HasPartial(), cut != one && cut != two);
    s.Feed(stream.substr(cut));
    for (auto& f : Drain(s)) frames.push_back(f);
    ASSERT_EQ(frames, (std::vector<std::string>{kBinary1, kBinary2, ""})) << "cut at " << cut;
    EXPECT_FALSE(s.HasPartial());
  }
}

TEST(LengthFrameScannerTest, ReadyFramesCountsCompleteFramesNotYetReturned) {
  LengthFrameScanner s;
  const std::string wire = LengthPrefixed(kBinary1) + LengthPrefixed(kBinary2);
  s.Feed(wire.substr(0, wire.size() - 1));
  EXPECT_EQ(s.ready_frames(), 1u);
  ASSERT_TRUE(s.Next().ok());
  EXPECT_EQ(s.ready_frames(), 0u);
  s.Feed(wire.substr(wire.size() - 1));
  EXPECT_EQ(s.ready_frames(), 1u);
}

TEST(LengthFrameScannerTest, ProtobufContentTypes) {
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf;stream=watch"));
  EXPECT_FALSE(IsProtobufContentType("application/vnd.kubernetes.protobuffer"));
  EXPECT_FALSE(IsProtobufContentType("application/json"));
  EXPECT_FALSE(IsProtobufContentType(""));
}

// A frame whose announced length is over the limit fails at once (nothing buffered for it).
TEST(LengthFrameScannerTest, FrameOverTheLimitIsTooLarge) {
  LengthFrameScanner s(100);
  s.Feed(LengthPrefixed(std::string(100, 'x')) + std::string("\x00\x00\x00\x65", 4));
  auto first = s.Next();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->value().size(), 100u);
  auto big = s.Next();
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().transport, TransportCause::kTooLarge);
  EXPECT_EQ(s.partial_bytes(), 0u);
}

// The limit holds however the stream is cut: the frame before the oversized one comes out, then
// kTooLarge, and nothing of the oversized frame is held, its length prefix split or not.
TEST(LengthFrameScannerTest, FrameOverTheLimitSplitAnywhere) {
  const std::string stream = LengthPrefixed(kBinary1) + LengthPrefixed(std::string(101, 'x'));
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    LengthFrameScanner s(100);
    s.Feed(stream.substr(0, cut));
    EXPECT_LE(s.partial_bytes(), 100u) << "cut at " << cut;
    std::vector<std::string> frames;
    std::optional<Error> err;
    auto drain = [&] {
      while (!err) {
        auto f = s.Next();
        if (!f.ok()) {
          err = f.error();
        } else if (!f->has_value()) {
          break;
        } else {
          frames.push_back(**f);
        }
      }
    };
    drain();
    s.Feed(stream.substr(cut));
    drain();
    ASSERT_EQ(frames, (std::vector<std::string>{kBinary1})) << "cut at " << cut;
    ASSERT_TRUE(err.has_value()) << "cut at " << cut;
    EXPECT_EQ(err->transport, TransportCause::kTooLarge);
    EXPECT_EQ(s.partial_bytes(), 0u);
  }
}

std::shared_ptr<RestClient> NewClient(const TestServer& server) {
  auto c = RestClient::Create({.host = server.url(), .qps = -1});
  EXPECT_TRUE(c.ok());
  return *c;
}

const GroupVersionResource kPods{"", "v1", "pods"};

// 1.8 a chunked watch stream: frames split over chunks, several per chunk, ERROR passed through,
// clean end = nullopt; the watch query parameters on the wire.
TEST(WatchStreamTest, StreamsFramesAndEndsCleanly) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(kAdded.substr(0, 10));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    c.Chunk(kAdded.substr(10) + "\n" + kModified.substr(0, 5));
    c.Chunk(kModified.substr(5) + "\n" + kError + "\n");
    c.EndChunked();
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch(
      "ns", {.resource_version = "42", .allow_watch_bookmarks = true, .timeout_seconds = 300});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  std::vector<std::string> frames;
  while (true) {
    auto f = (*w)->Next();
    ASSERT_TRUE(f.ok()) << f.error().ToString();
    if (!f->has_value()) break;
    frames.push_back(**f);
  }
  EXPECT_EQ(frames, (std::vector<std::string>{kAdded, kModified, kError}));
  auto again = (*w)->Next();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
  EXPECT_EQ(server.requests().at(0).target,
            "/api/v1/namespaces/ns/pods?allowWatchBookmarks=true&resourceVersion=42"
            "&timeoutSeconds=300&watch=true");
}

// A watch asks for identity encoding (libcurl 7.88 fails gzip-encoded protobuf watch streams of
// kube-apiserver); other requests, a LIST among them, still ask for gzip.
TEST(WatchStreamTest, WatchAsksForIdentityEncodingListForGzip) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.target.find("watch=true") != std::string::npos) {
      c.StartChunked(200);
      c.EndChunked();
    } else {
      c.Respond(200, R"({"kind":"PodList","metadata":{},"items":[]})");
    }
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("ns", {.timeout_seconds = 300});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto end = (*w)->Next();
  ASSERT_TRUE(end.ok()) << end.error().ToString();
  ASSERT_TRUE(pods.List("ns", {}).ok());
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_THAT(server.requests()[0].Header("accept-encoding"),
              ::testing::Not(::testing::HasSubstr("gzip")));
  EXPECT_THAT(server.requests()[1].Header("accept-encoding"), ::testing::HasSubstr("gzip"));
}

// RestConfig::disable_compression (rest.Config.DisableCompression): every request of that client,
// a second one on the pooled handle too, leaves gzip out of Accept-Encoding, so the server answers
// uncompressed; a client without the option still asks for gzip.
TEST(WatchStreamTest, DisableCompressionLeavesGzipOutOfEveryRequest) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.Respond(200, R"({"kind":"PodList","metadata":{},"items":[]})");
  });
  auto plain = RestClient::Create({.host = server.url(), .qps = -1, .disable_compression = true});
  ASSERT_TRUE(plain.ok()) << plain.error().ToString();
  ResourceClient pods(*plain, kPods, true);
  ASSERT_TRUE(pods.List("ns", {}).ok());
  ASSERT_TRUE(pods.List("ns", {}).ok());  // a pooled handle: options set again per request
  ResourceClient compressed(NewClient(server), kPods, true);
  ASSERT_TRUE(compressed.List("ns", {}).ok());
  ASSERT_EQ(server.requests().size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_THAT(server.requests()[i].Header("accept-encoding"),
                ::testing::Not(::testing::HasSubstr("gzip")))
        << "request " << i;
  }
  EXPECT_THAT(server.requests()[2].Header("accept-encoding"), ::testing::HasSubstr("gzip"));
}

// A protobuf Accept answered with protobuf: the stream switches to length-prefixed frames (split
// over chunks); ending inside a frame is a decoding error.
TEST(WatchStreamTest, ProtobufAnswerUsesLengthPrefixedFrames) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    const std::string wire = LengthPrefixed(kBinary1) + LengthPrefixed(kBinary2);
    c.StartChunked(200, {{"Content-Type", "application/vnd.kubernetes.protobuf;stream=watch"}});
    c.Chunk(wire.substr(0, 3));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    c.Chunk(wire.substr(3, 20));
    c.Chunk(wire.substr(23) + std::string("\x00\x00\x01", 3));
    c.EndChunked();
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("ns", {}, {}, kAcceptProtobufOrJSON);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto first = (*w)->Next();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_TRUE((*w)->protobuf());
  EXPECT_EQ(**first, kBinary1);
  auto second = (*w)->Next();
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(**second, kBinary2);
  auto truncated = (*w)->Next();
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().reason, errors::reason::kClientWatchDecoding);
  EXPECT_EQ(server.requests().at(0).Header("accept"), kAcceptProtobufOrJSON);
}

// A protobuf Accept answered with JSON (a server or kind without protobuf): JSON frames, as
// before. Without an Accept of its own the client asks for JSON.
TEST(WatchStreamTest, JsonAnswerToProtobufAcceptStaysJson) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(kAdded + "\n");
    c.EndChunked();
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("ns", {}, {}, kAcceptProtobufOrJSON);
  ASSERT_TRUE(w.ok());
  auto first = (*w)->Next();
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_FALSE((*w)->protobuf());
  EXPECT_EQ(**first, kAdded);
  auto plain = pods.Watch("ns", {});
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE((*plain)->Next().ok());
  EXPECT_EQ(server.requests().at(1).Header("accept"), "application/json");
}

// buffered_frames(): the frames of one chunk that Next() has not returned yet; zero once they
// are out, while the server holds the next frame (the next Next() reads, and waits for it).
TEST(WatchStreamTest, BufferedFramesAreTheRestOfARead) {
  std::promise<void> drained;
  std::shared_future<void> drained_seen = drained.get_future().share();
  TestServer server([drained_seen](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(kAdded + "\n" + kModified + "\n" + kAdded + "\n");
    drained_seen.wait();
    c.Chunk(kModified + "\n");
    c.EndChunked();
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("ns", {});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  EXPECT_EQ((*w)->buffered_frames(), 0u);
  std::vector<std::size_t> buffered;
  for (int i = 0; i < 3; ++i) {
    auto f = (*w)->Next();
    ASSERT_TRUE(f.ok() && f->has_value());
    buffered.push_back((*w)->buffered_frames());
  }
  EXPECT_EQ(buffered, (std::vector<std::size_t>{2, 1, 0}));
  drained.set_value();
  auto last = (*w)->Next();
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ(**last, kModified);
  EXPECT_EQ((*w)->buffered_frames(), 0u);
}

// 1.8 a stream that ends inside a frame: synthetic 500 ClientWatchDecoding.
TEST(WatchStreamTest, TruncatedFrameIsDecodingError) {
  for (bool abrupt : {false, true}) {
    TestServer server([abrupt](const RecordedRequest&, Conn& c) {
      c.StartChunked(200);
      c.Chunk(kAdded + "\n" + kModified.substr(0, 20));
      if (abrupt) {
        c.Close();
      } else {
        c.EndChunked();
      }
    });
    ResourceClient pods(NewClient(server), kPods, true);
    auto w = pods.Watch("", {});
    ASSERT_TRUE(w.ok());
    auto first = (*w)->Next();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(**first, kAdded);
    auto second = (*w)->Next();
    ASSERT_FALSE(second.ok()) << "abrupt=" << abrupt;
    EXPECT_EQ(second.error().code, 500);
    EXPECT_EQ(second.error().reason, errors::reason::kClientWatchDecoding);
  }
}

// 1.8 an HTTP error on the watch request (410 Expired) comes back from the first Next().
TEST(WatchStreamTest, HttpErrorFromFirstNext) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.Respond(410, R"j({"kind":"Status","code":410,"reason":"Expired",
      "message":"too old resource version: 1 (200)"})j");
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("", {.resource_version = "1"});
  ASSERT_TRUE(w.ok());
  auto f = (*w)->Next();
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(errors::IsResourceExpired(f.error()));
  EXPECT_EQ(f.error().message, "too old resource version: 1 (200)");
}

// 1.8 Stop() from another thread ends a blocked Next() promptly (well under the 1 s poll).
TEST(WatchStreamTest, StopFromAnotherThreadCancelsPromptly) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(kAdded + "\n");
    c.HoldOpen();
  });
  ResourceClient pods(NewClient(server), kPods, true);
  auto w = pods.Watch("", {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Next().ok());
  std::chrono::steady_clock::time_point stopped_at;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stopped_at = std::chrono::steady_clock::now();
    (*w)->Stop();
  });
  auto f = (*w)->Next();
  const auto returned_at = std::chrono::steady_clock::now();
  stopper.join();
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->has_value());
  EXPECT_LT(returned_at - stopped_at, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace kcm::client
