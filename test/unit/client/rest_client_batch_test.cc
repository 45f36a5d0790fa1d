// RestClient::DoAll: a batch of requests in flight at once from one caller thread, with Do's
// semantics (docs/design/client-transport.md, "What step 3 built").
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/client/api_errors.h"
#include "pkg/client/client_metrics.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/token_source.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::Conn;
using testing::RecordedRequest;
using testing::TestServer;

std::shared_ptr<RestClient> NewClient(RestConfig config, RestClient::Options opts = {}) {
  auto c = RestClient::Create(config, opts);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

// The threads of this process now (/proc/self/task).
int ThreadCount() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
    closedir(d);
  }
  return n;
}

std::vector<Request> Posts(int n) {
  std::vector<Request> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({.verb = "POST",
                   .path = "/api/v1/namespaces/ns/pods",
                   .body = R"({"n":)" + std::to_string(i) + "}"});
  }
  return out;
}

// The requests of one batch are in flight together, sent from the calling thread: the server
// answers none until all eight arrived (a batch sent one request after another would get the
// 400 after 10 s), and the answers come back in the order of the requests.
TEST(RestClientDoAllTest, SendsTheBatchAtOnceFromOneThread) {
  constexpr int kN = 8;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived >= kN; })) {
      lock.unlock();
      c.Respond(400, R"({"kind":"Status","code":400,"reason":"BadRequest"})");
      return;
    }
    lock.unlock();
    c.Respond(200, r.body);
  });
  auto client = NewClient({.host = server.url(), .qps = -1});
  const std::vector<Request> requests = Posts(kN);
  std::vector<CallAnswer> answers = client->DoAll(requests);
  ASSERT_EQ(answers.size(), static_cast<size_t>(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_TRUE(answers[i].sent);
    ASSERT_TRUE(answers[i].body.ok()) << answers[i].body.error().ToString();
    EXPECT_EQ(answers[i].body->substr(0, requests[i].body.size()), requests[i].body);
  }
}

// 1.5 retries through DoAll as Do retries: a 429 and then a 503 with Retry-After are retried
// until the answer, a GET's connection reset is resent, a POST's is not, a bare 429 comes back
// as TooManyRequests; each retry counted in rest_client_request_retries_total.
TEST(RestClientDoAllTest, RetriesAsDo) {
  std::mutex mu;
  std::map<std::string, int> attempts;
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    int n = 0;
    {
      std::lock_guard lock(mu);
      n = ++attempts[r.path];
    }
    if (r.path.ends_with("/busy")) {
      if (n == 1) c.Respond(429, "{}", {{"Retry-After", "0"}});
      if (n == 2) c.Respond(503, "{}", {{"Retry-After", "0"}});
      if (n >= 3) c.Respond(200, R"({"ok":1})");
    } else if (r.path.ends_with("/reset")) {
      if (n == 1) {
        c.Close();
      } else {
        c.Respond(200, R"({"ok":2})");
      }
    } else if (r.path.ends_with("/post-reset")) {
      c.Close();
    } else {
      c.Respond(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests"})");
    }
  });
  auto client = NewClient({.host = server.url(), .qps = -1});
  auto retries = GetClientMetrics().request_retries_total.With({"429", "POST", client->host()});
  const double before = retries.Value();
  const std::vector<Request> requests = {
      {.verb = "POST", .path = "/a/busy", .body = "{}"},
      {.verb = "GET", .path = "/b/reset"},
      {.verb = "POST", .path = "/c/post-reset", .body = "{}"},
      {.verb = "GET", .path = "/d/bare"},
  };
  std::vector<CallAnswer> answers = client->DoAll(requests);
  ASSERT_EQ(answers.size(), 4u);
  ASSERT_TRUE(answers[0].body.ok()) << answers[0].body.error().ToString();
  EXPECT_EQ(answers[0].body->substr(0, 8), R"({"ok":1})");
  ASSERT_TRUE(answers[1].body.ok()) << answers[1].body.error().ToString();
  ASSERT_FALSE(answers[2].body.ok());
  EXPECT_EQ(answers[2].body.error().transport, TransportCause::kConnectionReset);
  ASSERT_FALSE(answers[3].body.ok());
  EXPECT_EQ(answers[3].body.error().code, 429);
  for (const CallAnswer& a : answers) EXPECT_TRUE(a.sent);
  std::lock_guard lock(mu);
  EXPECT_EQ(attempts["/a/busy"], 3);
  EXPECT_EQ(attempts["/b/reset"], 2);
  EXPECT_EQ(attempts["/c/post-reset"], 1);
  EXPECT_EQ(attempts["/d/bare"], 1);
  EXPECT_EQ(retries.Value() - before, 1);
}

// A token source whose token changes when invalidated.
class RotatingTokens final : public TokenSource {
 public:
  Result<std::string> Token() override { return "tok-" + std::to_string(version_.load()); }
  void Invalidate() override { ++version_; }
  bool Refreshable() const override { return true; }

 private:
  std::atomic<int> version_{1};
};

// 1.3 through DoAll: a 401 is resent once with a fresh token; a token refused again comes back
// Unauthorized after that one retry.
TEST(RestClientDoAllTest, UnauthorizedResentOnceWithAFreshToken) {
  std::atomic<bool> accept_any_new{true};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    if (r.Header("authorization") != "Bearer tok-1" && accept_any_new) {
      c.Respond(200, "{}");
    } else {
      c.Respond(401, R"({"kind":"Status","code":401,"reason":"Unauthorized"})");
    }
  });
  auto tokens = std::make_shared<RotatingTokens>();
  auto client = NewClient({.host = server.url(), .token_source = tokens, .qps = -1});
  const std::vector<Request> one = {{.path = "/x"}};
  std::vector<CallAnswer> answers = client->DoAll(one);
  ASSERT_TRUE(answers[0].body.ok()) << answers[0].body.error().ToString();
  ASSERT_EQ(server.requests().size(), 2u);
  EXPECT_EQ(server.requests()[0].Header("authorization"), "Bearer tok-1");
  EXPECT_EQ(server.requests()[1].Header("authorization"), "Bearer tok-2");

  accept_any_new = false;
  answers = client->DoAll(one);
  ASSERT_FALSE(answers[0].body.ok());
  EXPECT_TRUE(errors::IsUnauthorized(answers[0].body.error()));
  EXPECT_EQ(server.requests().size(), 4u);
}

// No thread per write: 200 creates queued behind the limiter (qps 1, burst 1, on a fake clock)
// wait with the one calling thread. Once the first is answered and the caller sleeps for the
// second token, the process has at most the caller and the server's connection thread more than
// before. The stop then ends the batch: no request not yet admitted is sent, and those come back
// unsent and "Canceled".
TEST(RestClientDoAllTest, QueuedWritesTakeNoThreadAndAStopSendsNoMore) {
  std::atomic<int> received{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    ++received;
    c.Respond(201, R"({"kind":"Pod"})");
  });
  FakeClock clock;
  auto client = NewClient({.host = server.url(), .qps = 1, .burst = 1}, {.clock = &clock});
  // A first request outside the batch opens the loop and the server's connection thread.
  ASSERT_TRUE(client->Do({.path = "/warm"}).ok());
  const int before = ThreadCount();
  const std::vector<Request> requests = Posts(200);
  std::stop_source stop;
  std::vector<CallAnswer> answers;
  std::thread caller([&] { answers = client->DoAll(requests, stop.get_token()); });
  // The warm-up took the burst's token: the batch's first request waits for one second.
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(std::chrono::seconds(1));
  // Liveness bound only: the first create reaches the server.
  for (int i = 0; i < 10000 && received.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(received.load(), 2);
  // Sent, so its limiter wait is over: this waiter is `caller` waiting for the second token.
  ASSERT_TRUE(clock.WaitForWaiters(1));
  const int during = ThreadCount();
  EXPECT_LE(during - before, 2) << "threads before " << before << ", during " << during;
  stop.request_stop();
  caller.join();
  ASSERT_EQ(answers.size(), 200u);
  EXPECT_TRUE(answers[0].sent);
  ASSERT_TRUE(answers[0].body.ok()) << answers[0].body.error().ToString();
  for (size_t i = 1; i < answers.size(); ++i) {
    EXPECT_FALSE(answers[i].sent) << i;
    ASSERT_FALSE(answers[i].body.ok());
    EXPECT_EQ(answers[i].body.error().reason, errors::reason::kCanceled);
  }
  EXPECT_EQ(received.load(), 2);  // the warm-up and the batch's first
}

// A batch takes its tokens at once, as upstream's slowStartBatch goroutines each waiting in the
// client's tokenBucketRateLimiter.Wait do: a
// request asked for by another thread after the batch started (the event recorder's, another
// worker's) is sent after the whole batch, not between its requests. qps 1, burst 1, on a fake
// clock stepped a second at a time: the batch's three GETs go at 0, 1 and 2 s, the later Do at 3 s.
TEST(RestClientDoAllTest, ABatchReservesItsTokensAheadOfLaterRequests) {
  std::atomic<int> received{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    ++received;
    c.Respond(200, "{}");
  });
  FakeClock clock;
  auto client = NewClient({.host = server.url(), .qps = 1, .burst = 1}, {.clock = &clock});
  const std::vector<Request> batch = {{.path = "/b0"}, {.path = "/b1"}, {.path = "/b2"}};
  std::vector<CallAnswer> answers;
  std::thread batch_caller([&] { answers = client->DoAll(batch); });
  // /b0 took the burst's token; the batch sleeps for /b1's.
  ASSERT_TRUE(clock.WaitForWaiters(1));
  Result<std::string> later = std::string();
  std::thread later_caller([&] { later = client->Do({.path = "/later"}); });
  ASSERT_TRUE(clock.WaitForWaiters(2));
  for (int sent = 2; sent <= 4; ++sent) {
    clock.Step(std::chrono::seconds(1));
    // Liveness bound only.
    for (int i = 0; i < 10000 && received.load() < sent; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(received.load(), sent);
  }
  batch_caller.join();
  later_caller.join();
  ASSERT_TRUE(later.ok());
  const std::vector<RecordedRequest> seen = server.requests();
  ASSERT_EQ(seen.size(), 4u);
  // The batch's requests are in flight together, so the server may see them in any order.
  std::vector<std::string> first_three = {seen[0].path, seen[1].path, seen[2].path};
  std::sort(first_three.begin(), first_three.end());
  EXPECT_EQ(first_three, (std::vector<std::string>{"/b0", "/b1", "/b2"}));
  EXPECT_EQ(seen[3].path, "/later");
}

// A stop requested before the batch: nothing is sent, every answer is unsent and "Canceled".
TEST(RestClientDoAllTest, StopBeforeAdmissionSendsNothing) {
  std::atomic<int> received{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    ++received;
    c.Respond(201, "{}");
  });
  auto client = NewClient({.host = server.url(), .qps = -1});
  std::stop_source stop;
  stop.request_stop();
  const std::vector<Request> requests = Posts(5);
  std::vector<CallAnswer> answers = client->DoAll(requests, stop.get_token());
  ASSERT_EQ(answers.size(), 5u);
  for (const CallAnswer& a : answers) {
    EXPECT_FALSE(a.sent);
    ASSERT_FALSE(a.body.ok());
    EXPECT_EQ(a.body.error().reason, errors::reason::kCanceled);
  }
  EXPECT_EQ(received.load(), 0);
}

// A stop while writes are in flight: they are not abandoned but answered (a canceled create may
// still be carried out by the server, and a range's new owner would miss it: a pod created
// twice); the reads in flight are canceled at once. The server holds every answer until the test
// opens its gate, after the stop.
TEST(RestClientDoAllTest, AStopWaitsForTheWritesInFlight) {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool open = false;
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return open; });
    lock.unlock();
    c.Respond(r.method == "POST" ? 201 : 200, R"({"kind":"Pod"})");
  });
  auto client = NewClient({.host = server.url(), .qps = -1},
                          {.write_settle_grace = std::chrono::seconds(30)});
  std::vector<Request> requests = Posts(3);
  requests.push_back({.verb = "GET", .path = "/api/v1/namespaces/ns/pods/p"});
  std::stop_source stop;
  std::vector<CallAnswer> answers;
  std::atomic<bool> returned{false};
  std::thread caller([&] {
    answers = client->DoAll(requests, stop.get_token());
    returned = true;
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 4; }));
  }
  stop.request_stop();
  // The GET is canceled at once; the POSTs are still unanswered, so DoAll must still wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "DoAll returned with writes still in flight";
  {
    std::lock_guard lock(mu);
    open = true;
  }
  cv.notify_all();
  caller.join();
  ASSERT_EQ(answers.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(answers[i].sent) << i;
    EXPECT_TRUE(answers[i].body.ok()) << i << ": " << answers[i].body.error().ToString();
  }
  ASSERT_FALSE(answers[3].body.ok());
  EXPECT_EQ(answers[3].body.error().reason, errors::reason::kCanceled);
}

// A server that does not answer a write still ends the batch: the writes in flight are abandoned
// write_settle_grace after the stop, "Canceled".
TEST(RestClientDoAllTest, WritesUnansweredAfterTheGraceAreAbandoned) {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool done = false;
  TestServer server([&](const RecordedRequest&, Conn& c) {
    std::unique_lock lock(mu);
    ++arrived;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; });
    lock.unlock();
    c.Respond(201, "{}");
  });
  auto client = NewClient({.host = server.url(), .qps = -1},
                          {.write_settle_grace = std::chrono::milliseconds(100)});
  const std::vector<Request> requests = Posts(2);
  std::stop_source stop;
  std::vector<CallAnswer> answers;
  std::thread caller([&] { answers = client->DoAll(requests, stop.get_token()); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; }));
  }
  stop.request_stop();
  caller.join();  // hangs (the test times out) if the writes are never abandoned
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  ASSERT_EQ(answers.size(), 2u);
  for (const CallAnswer& a : answers) {
    EXPECT_TRUE(a.sent);
    ASSERT_FALSE(a.body.ok());
    EXPECT_EQ(a.body.error().reason, errors::reason::kCanceled);
  }
}

}  // namespace
}  // namespace kcm::client
