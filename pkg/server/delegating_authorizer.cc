#include "pkg/server/delegating_authorizer.h"

#include "pkg/api/json.h"

namespace kcm::server {
namespace {

namespace json = api::json;

constexpr auto kCacheTTL = std::chrono::seconds(10);
constexpr size_t kMaxCacheEntries = 1024;

Result<json::Value> Post(client::RestClient& c, const std::string& path, const json::Value& body) {
  client::Request req;
  req.verb = "POST";
  req.path = path;
  req.body = json::Serialize(body);
  auto r = c.Do(req);
  if (!r.ok()) return r.error();
  return json::Parse(*r);
}

}  // namespace

DelegatingAuthorizer::DelegatingAuthorizer(std::shared_ptr<client::RestClient> authn,
                                           std::shared_ptr<client::RestClient> authz, Clock* clock)
    : authn_(std::move(authn)),
      authz_(std::move(authz)),
      clock_(clock ? *clock : RealClock::Get()) {}

Result<RequestAuthorizer::Decision> DelegatingAuthorizer::Authorize(std::string_view bearer_token,
                                                                    std::string_view verb,
                                                                    std::string_view path) {
  if (bearer_token.empty()) return Decision::kUnauthenticated;
  std::string key = std::string(bearer_token) + "\n" + std::string(verb) + "\n" + std::string(path);
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.expires > clock_.Now()) return it->second.decision;
  }

  json::Value review = json::Value::MakeObject();
  review.Set("apiVersion", json::Value::String("authentication.k8s.io/v1"));
  review.Set("kind", json::Value::String("TokenReview"));
  json::Value spec = json::Value::MakeObject();
  spec.Set("token", json::Value::String(std::string(bearer_token)));
  review.Set("spec", std::move(spec));
  auto tr = Post(*authn_, "/apis/authentication.k8s.io/v1/tokenreviews", review);
  if (!tr.ok()) return tr.error();

  Decision decision = Decision::kUnauthenticated;
  const json::Value* authenticated = json::GetPath(*tr, {"status", "authenticated"});
  if (authenticated && authenticated->is_bool() && authenticated->as_bool()) {
    const json::Value* user = json::GetPath(*tr, {"status", "user"});
    json::Value sar = json::Value::MakeObject();
    sar.Set("apiVersion", json::Value::String("authorization.k8s.io/v1"));
    sar.Set("kind", json::Value::String("SubjectAccessReview"));
    json::Value sar_spec = json::Value::MakeObject();
    if (user && user->is_object()) {
      if (const json::Value* v = user->Find("username")) sar_spec.Set("user", *v);
      if (const json::Value* v = user->Find("uid")) sar_spec.Set("uid", *v);
      if (const json::Value* v = user->Find("groups")) sar_spec.Set("groups", *v);
      if (const json::Value* v = user->Find("extra")) sar_spec.Set("extra", *v);
    }
    json::Value attrs = json::Value::MakeObject();
    attrs.Set("path", json::Value::String(std::string(path)));
    attrs.Set("verb", json::Value::String(std::string(verb)));
    sar_spec.Set("nonResourceAttributes", std::move(attrs));
    sar.Set("spec", std::move(sar_spec));
    auto answer = Post(*authz_, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar);
    if (!answer.ok()) return answer.error();
    const json::Value* allowed = json::GetPath(*answer, {"status", "allowed"});
    decision = allowed && allowed->is_bool() && allowed->as_bool() ? Decision::kAllow
                                                                   : Decision::kForbidden;
  }

  std::lock_guard lock(mu_);
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();  // Bounded; a rare full refill is cheap.
  cache_[key] = Cached{decision, clock_.Now() + kCacheTTL};
  return decision;
}

}  // namespace kcm::server
