#include "pkg/server/delegating_authorizer.h"

#include <openssl/evp.h>

#include "pkg/api/json.h"
#include "pkg/util/klog.h"

namespace kcm::server {
namespace {

namespace json = api::json;

Result<json::Value> Post(client::RestClient& c, const std::string& path, const json::Value& body) {
  client::Request req;
  req.verb = "POST";
  req.path = path;
  req.body = json::Serialize(body);
  auto r = c.Do(req);
  if (!r.ok()) return r.error();
  return json::Parse(*r);
}

// The cache key for a token: its digest, so the cache holds no credential.
std::string TokenKey(std::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(token.data(), token.size(), digest, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), len);
}

// Length-prefixed fields, so no two distinct tuples share a key.
void AppendField(std::string& key, std::string_view field) {
  key += std::to_string(field.size());
  key += ':';
  key += field;
}

std::string DecisionKey(const UserInfo& user, std::string_view verb, std::string_view path) {
  std::string key;
  AppendField(key, user.name);
  AppendField(key, user.uid);
  AppendField(key, std::to_string(user.groups.size()));
  for (const auto& g : user.groups) AppendField(key, g);
  AppendField(key, std::to_string(user.extra.size()));
  for (const auto& [k, values] : user.extra) {
    AppendField(key, k);
    AppendField(key, std::to_string(values.size()));
    for (const auto& v : values) AppendField(key, v);
  }
  AppendField(key, verb);
  AppendField(key, path);
  return key;
}

std::vector<std::string> Strings(const json::Value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& item : v->as_array()) {
    if (item.is_string()) out.push_back(item.as_string());
  }
  return out;
}

UserInfo UserFromReview(const json::Value* user) {
  UserInfo out;
  if (user == nullptr || !user->is_object()) return out;
  if (const json::Value* v = user->Find("username"); v && v->is_string()) out.name = v->as_string();
  if (const json::Value* v = user->Find("uid"); v && v->is_string()) out.uid = v->as_string();
  out.groups = Strings(user->Find("groups"));
  if (const json::Value* extra = user->Find("extra"); extra && extra->is_object()) {
    for (const auto& [k, values] : extra->as_object()) out.extra[k] = Strings(&values);
  }
  return out;
}

json::Value StringArray(const std::vector<std::string>& items) {
  json::Value::Array out;
  for (const auto& s : items) out.push_back(json::Value::String(s));
  return json::Value::MakeArray(std::move(out));
}

}  // namespace

template <typename V>
bool DelegatingAuthorizer::TtlCache<V>::Get(const std::string& key, Clock::time_point now, V* out) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  if (it->second.expires <= now) {
    order_.erase(it->second.order);
    entries_.erase(it);
    return false;
  }
  *out = it->second.value;
  return true;
}

template <typename V>
void DelegatingAuthorizer::TtlCache<V>::Put(const std::string& key, V value,
                                            Clock::time_point expires) {
  if (auto it = entries_.find(key); it != entries_.end()) {
    order_.erase(it->second.order);
    entries_.erase(it);
  }
  while (entries_.size() >= kMaxCacheEntries && !order_.empty()) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  order_.push_back(key);
  entries_.emplace(key, Entry{std::move(value), expires, std::prev(order_.end())});
}

DelegatingAuthorizer::DelegatingAuthorizer(std::shared_ptr<client::RestClient> authn,
                                           std::shared_ptr<client::RestClient> authz, Clock* clock)
    : authn_(std::move(authn)),
      authz_(std::move(authz)),
      clock_(clock ? *clock : RealClock::Get()) {}

Result<RequestAuthorizer::Decision> DelegatingAuthorizer::Authorize(std::string_view bearer_token,
                                                                    std::string_view verb,
                                                                    std::string_view path) {
  if (bearer_token.empty()) return Decision::kUnauthenticated;
  const std::string key = TokenKey(bearer_token);
  TokenAnswer answer;
  bool cached;
  {
    std::lock_guard lock(mu_);
    cached = tokens_.Get(key, clock_.Now(), &answer);
  }
  if (!cached) {
    json::Value review = json::Value::MakeObject();
    review.Set("apiVersion", json::Value::String("authentication.k8s.io/v1"));
    review.Set("kind", json::Value::String("TokenReview"));
    json::Value spec = json::Value::MakeObject();
    spec.Set("token", json::Value::String(std::string(bearer_token)));
    review.Set("spec", std::move(spec));
    auto tr = Post(*authn_, "/apis/authentication.k8s.io/v1/tokenreviews", review);
    if (!tr.ok()) {
      // Upstream's bearer-token authenticator turns a failed review into 401 as well.
      KLOG_ERRORS(tr.error().ToString(), "TokenReview failed, answering 401");
      return Decision::kUnauthenticated;
    }
    const json::Value* authenticated = json::GetPath(*tr, {"status", "authenticated"});
    answer.authenticated = authenticated && authenticated->is_bool() && authenticated->as_bool();
    if (answer.authenticated) answer.user = UserFromReview(json::GetPath(*tr, {"status", "user"}));
    std::lock_guard lock(mu_);
    tokens_.Put(key, answer, clock_.Now() + kTokenCacheTTL);
  }
  if (!answer.authenticated) return Decision::kUnauthenticated;
  return AuthorizeUser(answer.user, verb, path);
}

Result<RequestAuthorizer::Decision> DelegatingAuthorizer::AuthorizeUser(const UserInfo& user,
                                                                        std::string_view verb,
                                                                        std::string_view path) {
  const std::string key = DecisionKey(user, verb, path);
  {
    std::lock_guard lock(mu_);
    bool allowed = false;
    if (decisions_.Get(key, clock_.Now(), &allowed)) {
      return allowed ? Decision::kAllow : Decision::kForbidden;
    }
  }
  json::Value sar = json::Value::MakeObject();
  sar.Set("apiVersion", json::Value::String("authorization.k8s.io/v1"));
  sar.Set("kind", json::Value::String("SubjectAccessReview"));
  json::Value spec = json::Value::MakeObject();
  spec.Set("user", json::Value::String(user.name));
  if (!user.uid.empty()) spec.Set("uid", json::Value::String(user.uid));
  if (!user.groups.empty()) spec.Set("groups", StringArray(user.groups));
  if (!user.extra.empty()) {
    json::Value extra = json::Value::MakeObject();
    for (const auto& [k, values] : user.extra) extra.Set(k, StringArray(values));
    spec.Set("extra", std::move(extra));
  }
  json::Value attrs = json::Value::MakeObject();
  attrs.Set("path", json::Value::String(std::string(path)));
  attrs.Set("verb", json::Value::String(std::string(verb)));
  spec.Set("nonResourceAttributes", std::move(attrs));
  sar.Set("spec", std::move(spec));
  auto answer = Post(*authz_, "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar);
  if (!answer.ok()) return answer.error();
  const json::Value* allowed_v = json::GetPath(*answer, {"status", "allowed"});
  const bool allowed = allowed_v && allowed_v->is_bool() && allowed_v->as_bool();
  std::lock_guard lock(mu_);
  decisions_.Put(key, allowed, clock_.Now() + (allowed ? kAllowCacheTTL : kDenyCacheTTL));
  return allowed ? Decision::kAllow : Decision::kForbidden;
}

}  // namespace kcm::server
