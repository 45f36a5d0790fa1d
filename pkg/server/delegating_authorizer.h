// DelegatingAuthorizer: decides who may read /metrics by asking the API server — a TokenReview
// authenticates the bearer token, a SubjectAccessReview authorizes "get" on the path (upstream's
// delegated authentication/authorization, S2). Both answers are cached, positive and negative
// alike, with upstream's kube-controller-manager defaults: 10 s for a token (authenticated or not;
// DelegatingAuthenticatorConfig's CacheTTL serves both) and 10 s for an allowed or a denied
// SubjectAccessReview (DelegatingAuthorizationOptions' AllowCacheTTL / DenyCacheTTL). Errors are
// not cached. Each cache holds at most kMaxCacheEntries, oldest first out. Thread-safe; the
// network calls run without the lock.
#pragma once

#include <chrono>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "pkg/client/rest_client.h"
#include "pkg/server/secure_server.h"
#include "pkg/util/clock.h"

namespace kcm::server {

class DelegatingAuthorizer final : public RequestAuthorizer {
 public:
  static constexpr auto kTokenCacheTTL = std::chrono::seconds(10);
  static constexpr auto kAllowCacheTTL = std::chrono::seconds(10);
  static constexpr auto kDenyCacheTTL = std::chrono::seconds(10);
  static constexpr size_t kMaxCacheEntries = 4096;

  // TokenReviews go through `authn`, SubjectAccessReviews through `authz` (often one client).
  DelegatingAuthorizer(std::shared_ptr<client::RestClient> authn,
                       std::shared_ptr<client::RestClient> authz, Clock* clock = nullptr);

  // A token the API server does not authenticate, or a TokenReview that fails (timeout, refused),
  // is kUnauthenticated (upstream answers 401 for both); a failing SubjectAccessReview is an error.
  Result<Decision> Authorize(std::string_view bearer_token, std::string_view verb,
                             std::string_view path) override;
  Result<Decision> AuthorizeUser(const UserInfo& user, std::string_view verb,
                                 std::string_view path) override;

 private:
  template <typename V>
  class TtlCache {
   public:
    bool Get(const std::string& key, Clock::time_point now, V* out);
    void Put(const std::string& key, V value, Clock::time_point expires);

   private:
    struct Entry {
      V value;
      Clock::time_point expires;
      std::list<std::string>::iterator order;
    };
    std::unordered_map<std::string, Entry> entries_;
    std::list<std::string> order_;  // insertion order, oldest first
  };

  struct TokenAnswer {
    bool authenticated = false;
    UserInfo user;
  };

  std::shared_ptr<client::RestClient> authn_;
  std::shared_ptr<client::RestClient> authz_;
  Clock& clock_;
  std::mutex mu_;
  TtlCache<TokenAnswer> tokens_;  // by SHA-256 of the token
  TtlCache<bool> decisions_;      // by user, groups, extra, verb, path
};

}  // namespace kcm::server
