// DelegatingAuthorizer against a scripted API server: what it sends, and that both positive and
// negative answers are cached for upstream's TTLs (so a flood of bad tokens costs one review per
// token per 10 s) while errors are not.
#include "pkg/server/delegating_authorizer.h"

#include <gtest/gtest.h>

#include <atomic>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::server {
namespace {

using namespace std::chrono_literals;
using Decision = RequestAuthorizer::Decision;
using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;

// Authenticates the token "good" as user "reader" (groups g1) and allows "reader" on /metrics.
struct ScriptedApiServer {
  std::atomic<int> token_reviews{0}, access_reviews{0};
  std::atomic<bool> fail_reviews{false};
  TestServer server{[this](const RecordedRequest& req, Conn& conn) {
    if (fail_reviews) {
      conn.Respond(500, R"({"kind":"Status","code":500})");
      return;
    }
    if (req.path == "/apis/authentication.k8s.io/v1/tokenreviews") {
      ++token_reviews;
      bool good = req.body.find(R"("token":"good")") != std::string::npos;
      conn.Respond(201, good ? R"({"status":{"authenticated":true,"user":{"username":"reader",)"
                               R"("uid":"u1","groups":["g1"],"extra":{"k":["v"]}}}})"
                             : R"({"status":{"authenticated":false}})");
      return;
    }
    ++access_reviews;
    bool reader = req.body.find(R"("user":"reader")") != std::string::npos &&
                  req.body.find(R"("path":"/metrics")") != std::string::npos;
    conn.Respond(201,
                 reader ? R"({"status":{"allowed":true}})" : R"({"status":{"allowed":false}})");
  }};

  std::shared_ptr<client::RestClient> Client() {
    client::RestConfig config{.host = server.url(), .qps = -1};
    auto c = client::RestClient::Create(config, {.retry = {.max_retries = 0}});
    EXPECT_TRUE(c.ok());
    return *c;
  }
};

TEST(DelegatingAuthorizerUnitTest, SendsReviewsAndDecides) {
  ScriptedApiServer api;
  auto c = api.Client();
  DelegatingAuthorizer authorizer(c, c);
  EXPECT_EQ(*authorizer.Authorize("good", "get", "/metrics"), Decision::kAllow);
  EXPECT_EQ(*authorizer.Authorize("good", "get", "/debug"), Decision::kForbidden);
  EXPECT_EQ(*authorizer.Authorize("bad", "get", "/metrics"), Decision::kUnauthenticated);
  EXPECT_EQ(*authorizer.Authorize("", "get", "/metrics"), Decision::kUnauthenticated);
  auto requests = api.server.requests();
  ASSERT_GE(requests.size(), 2u);
  const std::string& sar = requests[1].body;
  for (const char* part : {R"("user":"reader")", R"("uid":"u1")", R"("groups":["g1"])",
                           R"("extra":{"k":["v"]})", R"("verb":"get")"}) {
    EXPECT_NE(sar.find(part), std::string::npos) << part << " in " << sar;
  }
}

TEST(DelegatingAuthorizerUnitTest, NegativeAnswersAreCachedForTheirTTL) {
  ScriptedApiServer api;
  auto c = api.Client();
  FakeClock clock;
  DelegatingAuthorizer authorizer(c, c, &clock);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(*authorizer.Authorize("bad", "get", "/metrics"), Decision::kUnauthenticated);
    EXPECT_EQ(*authorizer.Authorize("good", "get", "/debug"), Decision::kForbidden);
    EXPECT_EQ(*authorizer.Authorize("good", "get", "/metrics"), Decision::kAllow);
  }
  EXPECT_EQ(api.token_reviews.load(), 2);   // "bad" and "good", once each
  EXPECT_EQ(api.access_reviews.load(), 2);  // /debug denied and /metrics allowed, once each
  clock.Step(DelegatingAuthorizer::kTokenCacheTTL + 1s);
  EXPECT_EQ(*authorizer.Authorize("bad", "get", "/metrics"), Decision::kUnauthenticated);
  EXPECT_EQ(*authorizer.Authorize("good", "get", "/debug"), Decision::kForbidden);
  EXPECT_EQ(api.token_reviews.load(), 4);
  EXPECT_EQ(api.access_reviews.load(), 3);
}

// A failing TokenReview answers 401 (as upstream) and is retried next time; a failing
// SubjectAccessReview is an error (500 at the server), not a cached denial.
TEST(DelegatingAuthorizerUnitTest, ErrorsAreNotCached) {
  ScriptedApiServer api;
  auto c = api.Client();
  DelegatingAuthorizer authorizer(c, c);
  api.fail_reviews = true;
  EXPECT_EQ(*authorizer.Authorize("good", "get", "/metrics"), Decision::kUnauthenticated);
  UserInfo user{.name = "reader"};
  EXPECT_FALSE(authorizer.AuthorizeUser(user, "get", "/metrics").ok());
  api.fail_reviews = false;
  EXPECT_EQ(*authorizer.Authorize("good", "get", "/metrics"), Decision::kAllow);
  EXPECT_EQ(*authorizer.AuthorizeUser(user, "get", "/metrics"), Decision::kAllow);
}

TEST(DelegatingAuthorizerUnitTest, CacheIsBounded) {
  ScriptedApiServer api;
  auto c = api.Client();
  DelegatingAuthorizer authorizer(c, c);
  const int n = static_cast<int>(DelegatingAuthorizer::kMaxCacheEntries) + 10;
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(authorizer.Authorize("bad-" + std::to_string(i), "get", "/metrics").ok());
  }
  EXPECT_EQ(api.token_reviews.load(), n);
  // The oldest entries were evicted, the newest kept.
  EXPECT_TRUE(authorizer.Authorize("bad-0", "get", "/metrics").ok());
  EXPECT_EQ(api.token_reviews.load(), n + 1);
  EXPECT_TRUE(authorizer.Authorize("bad-" + std::to_string(n - 1), "get", "/metrics").ok());
  EXPECT_EQ(api.token_reviews.load(), n + 1);
}

}  // namespace
}  // namespace kcm::server
