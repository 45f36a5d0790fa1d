#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "pkg/client/api_errors.h"
#include "pkg/client/json_frame_scanner.h"
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

// 1.8 frames split at every possible byte, with strings holding braces and escaped quotes.
TEST(JsonFrameScannerTest, FramesSplitAcrossReads) {
  const std::string stream = kAdded + "\n" + kModified + "\n";
  for (std::size_t cut = 1; cut < stream.size(); ++cut) {
    JsonFrameScanner s;
    s.Feed(stream.substr(0, cut));
    auto frames = Drain(s);
    s.Feed(stream.substr(cut));
    for (auto& f : Drain(s)) frames.push_back(f);
    ASSERT_EQ(frames, (std::vector<std::string>{kAdded, kModified})) << "cut at " << cut;
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
