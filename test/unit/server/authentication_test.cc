// The front-proxy header and client-certificate user mappings (upstream's headerrequest and
// x509 CommonNameUserConversion).
#include "pkg/server/authentication.h"

#include <gtest/gtest.h>

namespace kcm::server {
namespace {

TEST(AuthenticationTest, UserFromRequestHeaders) {
  RequestHeaderOptions o;
  o.username_headers = {"X-Remote-User", "X-Other-User"};
  HeaderList headers = {{"x-remote-user", "  "},          {"X-Other-User", " alice "},
                        {"X-Remote-Group", "g1"},         {"x-remote-group", "g2, g3"},
                        {"X-Remote-Extra-Scopes", "s1"},  {"X-REMOTE-EXTRA-scopes", "s2"},
                        {"X-Remote-Extra-a%2Fb%zz", "v"}, {"X-Remote-Extra-Acme.com%2Fp", "p"}};
  auto user = UserFromRequestHeaders(headers, o);
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->name, "alice");  // The first username header is blank: the next one wins.
  EXPECT_EQ(user->groups, (std::vector<std::string>{"g1", "g2, g3"}));  // Values kept whole.
  EXPECT_EQ(user->extra["scopes"], (std::vector<std::string>{"s1", "s2"}));
  EXPECT_EQ(user->extra["acme.com/p"], std::vector<std::string>{"p"});
  EXPECT_EQ(user->extra["a%2fb%zz"], std::vector<std::string>{"v"});  // Malformed: kept as sent.
}

TEST(AuthenticationTest, NoUsernameHeaderNoUser) {
  RequestHeaderOptions o;
  EXPECT_FALSE(UserFromRequestHeaders({{"X-Remote-Group", "g"}}, o).has_value());
  o.username_headers.clear();  // Upstream: no username headers = request-header auth off.
  EXPECT_FALSE(UserFromRequestHeaders({{"X-Remote-User", "alice"}}, o).has_value());
}

TEST(AuthenticationTest, ProxyNames) {
  EXPECT_TRUE(ProxyNameAllowed("anyone", {}));
  EXPECT_TRUE(ProxyNameAllowed("front-proxy", {"aggregator", "front-proxy"}));
  EXPECT_FALSE(ProxyNameAllowed("other", {"front-proxy"}));
}

TEST(AuthenticationTest, CertificateUserAndAuthenticatedGroup) {
  UserInfo u = UserFromCertificate("bob", {"team-a"});
  AddAuthenticatedGroup(u);
  AddAuthenticatedGroup(u);
  EXPECT_EQ(u.name, "bob");
  EXPECT_EQ(u.groups, (std::vector<std::string>{"team-a", "system:authenticated"}));
}

}  // namespace
}  // namespace kcm::server
