// The transport's loop (pkg/client/internal/event_loop.h): one thread for every Transport, ops
// posted from its own completions, idle pooled connections watched for unasked bytes, and the
// request cap.
#include "pkg/client/internal/event_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// Threads of this process named kcm-curl-loop.
int LoopThreads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "kcm-curl-loop") ++n;
  }
  return n;
}

// Waits up to 10 s for `done`.
template <typename F>
bool Eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST(EventLoopTest, TransportsShareOneLoopAndTheLastOneJoinsIt) {
  // A joined thread can stay listed in /proc/self/task for a moment after pthread_join returned
  // (the kernel clears its tid before it is reaped): the counts that fall wait for it, bounded.
  ASSERT_TRUE(Eventually([] { return LoopThreads() == 0; }))
      << "a Transport of an earlier test is still alive";
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto first = NewTransport();
  auto second = NewTransport();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(LoopThreads(), 1);
  ASSERT_TRUE(first->RoundTrip(Get(server.url() + "/a")).ok());
  ASSERT_TRUE(second->RoundTrip(Get(server.url() + "/b")).ok());
  EXPECT_EQ(server.connections(), 2) << "each Transport keeps its own connections";
  first.reset();
  EXPECT_EQ(LoopThreads(), 1) << "the second Transport still holds the loop";
  ASSERT_TRUE(second->RoundTrip(Get(server.url() + "/c")).ok());
  second.reset();
  EXPECT_TRUE(Eventually([] { return LoopThreads() == 0; }))
      << "the last Transport's release joins the loop";
  auto again = NewTransport();
  EXPECT_EQ(LoopThreads(), 1);
  EXPECT_TRUE(again->RoundTrip(Get(server.url() + "/d")).ok());
}

// A completion that cancels another transfer posts the cancel (it runs on the loop, between
// libcurl calls): the other transfer ends canceled and its connection is closed.
TEST(EventLoopTest, CancelFromACompletion) {
  std::atomic<bool> hang_closed{false};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (r.path == "/hang") {
      c.HoldOpen();
      hang_closed = true;
    } else {
      c.Respond(200, "{}");
    }
  });
  auto multi = internal::RequestMulti::Create([](char* errbuf) {
    internal::EasyPtr easy(curl_easy_init());
    curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(
        easy.get(), CURLOPT_WRITEFUNCTION, +[](char*, size_t, size_t n, void*) { return n; });
    return easy;
  });
  ASSERT_NE(multi, nullptr);
  auto transfer = [&](const std::string& path) {
    auto t = std::make_shared<internal::RequestTransfer>();
    t->handle = multi->TakeHandle();
    const std::string url = server.url() + path;
    curl_easy_setopt(t->handle->easy.get(), CURLOPT_URL, url.c_str());  // libcurl copies it
    return t;
  };
  auto hang = transfer("/hang");
  auto fast = transfer("/fast");
  internal::RequestMulti* m = multi.get();
  fast->on_done = [m, hang](internal::RequestTransfer&) { m->Cancel(hang); };
  multi->Start(hang);
  ASSERT_TRUE(Eventually([&] { return server.requests().size() == 1; }));
  multi->Start(fast);
  fast->done.Wait();
  EXPECT_FALSE(fast->canceled);
  EXPECT_EQ(fast->result, CURLE_OK);
  hang->done.Wait();
  EXPECT_TRUE(hang->canceled);
  EXPECT_TRUE(Eventually([&] { return hang_closed.load(); })) << "the canceled connection stays";
  multi->ReturnHandle(std::move(fast->handle));
  multi->ReturnHandle(std::move(hang->handle));
}

// Bytes nobody asked for on an idle pooled connection retire it at once, while it is idle: the
// server sees it closed before any other request is sent, and the next request connects anew.
TEST(EventLoopTest, UnaskedBytesOnAPooledIdleConnectionRetireIt) {
  std::atomic<bool> first_closed{false};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (r.path == "/first") {
      c.Respond(200, "{}");
      std::this_thread::sleep_for(50ms);
      c.WriteAll("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nunasked");
      char buf[256];
      while (c.ReadSome(buf, sizeof buf) > 0) {
      }
      first_closed = true;
    } else {
      c.Respond(200, "own answer");
    }
  });
  auto t = NewTransport();
  auto first = t->RoundTrip(Get(server.url() + "/first"));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->body, "{}");
  EXPECT_TRUE(Eventually([&] { return first_closed.load(); }))
      << "the idle connection was not retired";
  EXPECT_EQ(server.requests().size(), 1u);
  auto next = t->RoundTrip(Get(server.url() + "/next"));
  ASSERT_TRUE(next.ok()) << next.error().ToString();
  EXPECT_EQ(next->body, "own answer");
  EXPECT_EQ(server.connections(), 2);
}

// At most RequestMulti::kMaxRequests request transfers of a Transport in flight; the others wait
// for a slot and are all answered.
TEST(EventLoopTest, RequestsBeyondTheCapWaitForASlot) {
  constexpr int kCallers = internal::RequestMulti::kMaxRequests + 4;
  std::atomic<int> in_handler{0};
  std::atomic<int> most{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    const int now = ++in_handler;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(300ms);
    --in_handler;
    c.Respond(200, "{}");
  });
  auto t = NewTransport();
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      if (t->RoundTrip(Get(server.url() + "/slow")).ok()) ++ok;
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(ok.load(), kCallers);
  EXPECT_LE(most.load(), static_cast<int>(internal::RequestMulti::kMaxRequests));
  EXPECT_LE(server.connections(), static_cast<int>(internal::RequestMulti::kMaxRequests));
}

}  // namespace
}  // namespace kcm::client
