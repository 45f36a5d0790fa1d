// --use-service-account-credentials against a scripted API server: the service account is fetched
// or created, tokens come from TokenRequest and are cached until 20 % of their lifetime is left,
// a 401 forces a new one, and the controller's client sends the token and none of our own
// credentials.
#include "cmd/kube-controller-manager/app/service_account_token_source.h"

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "cmd/kube-controller-manager/app/controller_context.h"
#include "pkg/api/time.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::app {
namespace {

using namespace std::chrono_literals;

// A scripted API server that knows one namespace's service accounts and hands out tokens
// "token-1", "token-2", ... that expire `lifetime` after the given wall clock's now.
class FakeTokenServer {
 public:
  explicit FakeTokenServer(const Clock& clock) : clock_(clock) {}

  std::chrono::seconds lifetime{3600};
  bool account_exists = false;
  int token_status = 201;  // the answer to a TokenRequest

  void Handle(const testing::RecordedRequest& r, testing::Conn& c) {
    std::lock_guard lock(mu_);
    requests_.push_back(r.method + " " + r.path);
    bodies_.push_back(r.body);
    const std::string sa = "/api/v1/namespaces/kube-system/serviceaccounts";
    if (r.method == "GET" && r.path == sa + "/deployment-controller") {
      if (account_exists) return c.Respond(200, R"({"kind":"ServiceAccount"})");
      return c.Respond(404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
    }
    if (r.method == "POST" && r.path == sa) {
      account_exists = true;
      return c.Respond(201, R"({"kind":"ServiceAccount"})");
    }
    if (r.method == "POST" && r.path == sa + "/deployment-controller/token") {
      if (token_status != 201) {
        return c.Respond(token_status, R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                                       R"("message":"cannot create token"})");
      }
      const std::string expiry = api::FormatTime(clock_.WallNow() + lifetime);
      return c.Respond(201, R"({"kind":"TokenRequest","status":{"token":"token-)" +
                                std::to_string(++tokens_) + R"(","expirationTimestamp":")" +
                                expiry + R"("}})");
    }
    c.Respond(200, R"({"kind":"Pod","authorization":")" + r.Header("authorization") + R"("})");
    authorization_.push_back(r.Header("authorization"));
  }

  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::string> authorization() {
    std::lock_guard lock(mu_);
    return authorization_;
  }
  int tokens() {
    std::lock_guard lock(mu_);
    return tokens_;
  }

 private:
  const Clock& clock_;
  std::mutex mu_;
  std::vector<std::string> requests_, bodies_, authorization_;
  int tokens_ = 0;
};

client::RestConfig ConfigFor(const testing::TestServer& server) {
  client::RestConfig config;
  config.host = server.url();
  config.qps = -1;  // no client-side limit in tests
  config.bearer_token = "controller-manager-token";
  return config;
}

TEST(ServiceAccountTokenSourceTest, CreatesTheAccountThenRequestsAnHourLongToken) {
  FakeTokenServer fake(RealClock::Get());
  testing::TestServer server([&](const auto& r, auto& c) { fake.Handle(r, c); });
  auto root = client::RestClient::Create(ConfigFor(server));
  ASSERT_TRUE(root.ok());
  ServiceAccountTokenSource source(*root, "kube-system", "deployment-controller", RealClock::Get(),
                                   {});
  auto token = source.Token();
  ASSERT_TRUE(token.ok()) << token.error().ToString();
  EXPECT_EQ(*token, "token-1");
  EXPECT_EQ(
      fake.requests(),
      (std::vector<std::string>{
          "GET /api/v1/namespaces/kube-system/serviceaccounts/deployment-controller",
          "POST /api/v1/namespaces/kube-system/serviceaccounts",
          "POST /api/v1/namespaces/kube-system/serviceaccounts/deployment-controller/token"}));
  EXPECT_NE(fake.bodies()[1].find(R"("name":"deployment-controller")"), std::string::npos);
  EXPECT_NE(fake.bodies()[2].find(R"("expirationSeconds":3600)"), std::string::npos);
  // Cached: no second TokenRequest.
  EXPECT_EQ(*source.Token(), "token-1");
  EXPECT_EQ(fake.tokens(), 1);
}

TEST(ServiceAccountTokenSourceTest, RefreshedWhenTwentyPercentOfTheLifetimeIsLeftOrAfter401) {
  FakeClock clock;
  FakeTokenServer fake(clock);
  fake.account_exists = true;
  testing::TestServer server([&](const auto& r, auto& c) { fake.Handle(r, c); });
  auto root = client::RestClient::Create(ConfigFor(server));
  ASSERT_TRUE(root.ok());
  ServiceAccountTokenSource source(*root, "kube-system", "deployment-controller", clock, {});
  EXPECT_EQ(*source.Token(), "token-1");
  clock.Step(47min);  // 60 min lifetime, refreshed from minute 48 on
  EXPECT_EQ(*source.Token(), "token-1");
  clock.Step(2min);
  EXPECT_EQ(*source.Token(), "token-2");
  source.Invalidate();  // what the RestClient does on a 401
  EXPECT_EQ(*source.Token(), "token-3");

  // An expirationTimestamp that looks five minutes away is clock skew: the token is kept for
  // 80 % of the 10-minute minimum.
  fake.lifetime = 5min;
  source.Invalidate();
  EXPECT_EQ(*source.Token(), "token-4");
  clock.Step(7min);
  EXPECT_EQ(*source.Token(), "token-4");
  clock.Step(2min);
  EXPECT_EQ(*source.Token(), "token-5");
}

TEST(ServiceAccountTokenSourceTest, RefusedTokenRequestIsRetriedThenNamesTheAccount) {
  FakeTokenServer fake(RealClock::Get());
  fake.account_exists = true;
  fake.token_status = 403;
  testing::TestServer server([&](const auto& r, auto& c) { fake.Handle(r, c); });
  auto root = client::RestClient::Create(ConfigFor(server));
  ASSERT_TRUE(root.ok());
  ServiceAccountTokenSource::Options options;
  options.first_retry_wait = 1ms;
  ServiceAccountTokenSource source(*root, "kube-system", "deployment-controller", RealClock::Get(),
                                   options);
  auto token = source.Token();
  ASSERT_FALSE(token.ok());
  EXPECT_TRUE(errors::IsForbidden(token.error())) << token.error().ToString();
  EXPECT_NE(token.error().message.find("kube-system/deployment-controller"), std::string::npos)
      << token.error().message;
  int token_requests = 0;
  for (const auto& r : fake.requests()) token_requests += r.ends_with("/token") ? 1 : 0;
  EXPECT_EQ(token_requests, 4);  // upstream's wait.Backoff{Steps: 4}
}

// The controller's client carries the service account's token, never the controller manager's.
TEST(ServiceAccountTokenSourceTest, ControllerClientSendsTheAccountsToken) {
  FakeTokenServer fake(RealClock::Get());
  testing::TestServer server([&](const auto& r, auto& c) { fake.Handle(r, c); });
  ClientBuilder with(ConfigFor(server), /*use_service_account_credentials=*/true);
  auto client = with.ControllerClientFor("deployment-controller");
  ASSERT_TRUE(client.ok()) << client.error().ToString();
  EXPECT_TRUE(fake.account_exists) << "created when the client was built";
  client::Request get;
  get.path = "/api/v1/namespaces/default/pods/p";
  ASSERT_TRUE((*client)->Do(get).ok());
  ASSERT_TRUE((*client)->Do(get).ok());
  EXPECT_EQ(fake.authorization(), (std::vector<std::string>{"Bearer token-1", "Bearer token-1"}));

  ClientBuilder without(ConfigFor(server));
  auto own = without.ControllerClientFor("deployment-controller");
  ASSERT_TRUE(own.ok());
  ASSERT_TRUE((*own)->Do(get).ok());
  EXPECT_EQ(fake.authorization().back(), "Bearer controller-manager-token");
  EXPECT_EQ(fake.tokens(), 1);
}

// With shared clients (--sharding=namespace), every share's controllers write through one client
// per controller, so --kube-api-qps bounds the replica's controller, not each share's.
TEST(ClientBuilderTest, SharedClientsAreOnePerName) {
  client::RestConfig config;
  config.host = "https://127.0.0.1:1";
  ClientBuilder shared(config, false, /*share_clients=*/true);
  auto a = shared.ControllerClientFor("deployment-controller");
  auto b = shared.ControllerClientFor("deployment-controller");
  auto c = shared.ControllerClientFor("replicaset-controller");
  auto d = shared.ClientFor("shared-informers");
  auto e = shared.ClientFor("shared-informers");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok() && e.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(*d, *e);
  EXPECT_EQ(&(*a)->rate_limiter(), &(*b)->rate_limiter());
  ClientBuilder own(config);
  EXPECT_NE(*own.ControllerClientFor("deployment-controller"),
            *own.ControllerClientFor("deployment-controller"));
}

}  // namespace
}  // namespace kcm::app
