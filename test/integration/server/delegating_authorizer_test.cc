// DelegatingAuthorizer against a real kube-apiserver (S2): TokenReview authenticates the
// caller, SubjectAccessReview decides "get /metrics".
#include "pkg/server/delegating_authorizer.h"

#include <gtest/gtest.h>

#include "test/integration/framework/testenv.h"

namespace kcm::server {
namespace {

auto* const kEnv = testenv::RegisterTestbed({});

std::shared_ptr<client::RestClient> Client(const std::string& token) {
  client::RestConfig config{.host = kEnv->info().server,
                            .ca_file = kEnv->info().ca_file,
                            .bearer_token = token,
                            .qps = -1};
  auto c = client::RestClient::Create(config);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

using Decision = RequestAuthorizer::Decision;

TEST(DelegatingAuthorizerTest, AdminAllowedOthersForbiddenUnknownUnauthenticated) {
  KCM_REQUIRE_TESTBED();
  // The reviews are sent as the controller-manager user: deploy/rbac.yaml must let it create
  // TokenReviews and SubjectAccessReviews.
  auto kcm = Client(kEnv->info().kcm_token);
  ASSERT_NE(kcm, nullptr);
  DelegatingAuthorizer authorizer(kcm, kcm);

  auto admin = authorizer.Authorize(kEnv->info().admin_token, "get", "/metrics");
  ASSERT_TRUE(admin.ok()) << admin.error().ToString();
  EXPECT_EQ(*admin, Decision::kAllow);

  // system:kcm-test has no nonResourceURLs rule for /metrics.
  auto limited = authorizer.Authorize(kEnv->info().kcm_token, "get", "/metrics");
  ASSERT_TRUE(limited.ok()) << limited.error().ToString();
  EXPECT_EQ(*limited, Decision::kForbidden);

  auto unknown = authorizer.Authorize("not-a-real-token", "get", "/metrics");
  ASSERT_TRUE(unknown.ok()) << unknown.error().ToString();
  EXPECT_EQ(*unknown, Decision::kUnauthenticated);

  auto none = authorizer.Authorize("", "get", "/metrics");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Decision::kUnauthenticated);
}

}  // namespace
}  // namespace kcm::server
