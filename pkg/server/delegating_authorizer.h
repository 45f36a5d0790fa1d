// DelegatingAuthorizer: decides who may read /metrics by asking the API server — a TokenReview
// authenticates the bearer token, a SubjectAccessReview authorizes "get" on the path (upstream's
// delegated authentication/authorization, spec S2). Answers are cached for 10 s as upstream does.
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "pkg/client/rest_client.h"
#include "pkg/server/secure_server.h"
#include "pkg/util/clock.h"

namespace kcm::server {

class DelegatingAuthorizer final : public RequestAuthorizer {
 public:
  // TokenReviews go through `authn`, SubjectAccessReviews through `authz` (often one client).
  DelegatingAuthorizer(std::shared_ptr<client::RestClient> authn,
                       std::shared_ptr<client::RestClient> authz, Clock* clock = nullptr);

  Result<Decision> Authorize(std::string_view bearer_token, std::string_view verb,
                             std::string_view path) override;

 private:
  struct Cached {
    Decision decision;
    Clock::time_point expires;
  };

  std::shared_ptr<client::RestClient> authn_;
  std::shared_ptr<client::RestClient> authz_;
  Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;  // by token + verb + path
};

}  // namespace kcm::server
