#include "cmd/kube-controller-manager/app/service_account_token_source.h"

#include "pkg/api/json.h"
#include "pkg/api/time.h"
#include "pkg/client/request_path.h"
#include "pkg/util/klog.h"

namespace kcm::app {
namespace {

const client::GroupVersionResource kServiceAccounts =
    client::GroupVersionResource::Of(api::kServiceAccounts);

// The error, its message prefixed with what was being done (code, reason and cause kept).
Error Annotate(Error e, const std::string& what) {
  e.message = what + ": " + e.message;
  return e;
}

}  // namespace

Status GetOrCreateServiceAccount(client::RestClient& root, const std::string& ns,
                                 const std::string& name) {
  client::Request get;
  get.path = client::ResourcePath(kServiceAccounts, ns, name);
  auto got = root.Do(get);
  if (got.ok()) return OkStatus();
  if (!errors::IsNotFound(got.error())) {
    return Annotate(got.error(), "get service account " + ns + "/" + name);
  }
  client::Request create;
  create.verb = "POST";
  create.path = client::ResourcePath(kServiceAccounts, ns);
  api::json::Value meta = api::json::Value::MakeObject();
  meta.Set("name", api::json::Value::String(name));
  meta.Set("namespace", api::json::Value::String(ns));
  api::json::Value sa = api::json::Value::MakeObject();
  sa.Set("apiVersion", api::json::Value::String("v1"));
  sa.Set("kind", api::json::Value::String("ServiceAccount"));
  sa.Set("metadata", std::move(meta));
  create.body = api::json::Serialize(sa);
  auto created = root.Do(create);
  // Another controller manager racing to start created it first: that is the account we want.
  if (created.ok() || errors::IsAlreadyExists(created.error())) {
    if (created.ok()) KLOG_INFOS("Created service account", "serviceAccount", klog::KRef(ns, name));
    return OkStatus();
  }
  return Annotate(created.error(), "create service account " + ns + "/" + name);
}

ServiceAccountTokenSource::ServiceAccountTokenSource(std::shared_ptr<client::RestClient> root,
                                                     std::string ns, std::string name, Clock& clock,
                                                     Options options)
    : root_(std::move(root)),
      ns_(std::move(ns)),
      name_(std::move(name)),
      clock_(clock),
      options_(options) {}

Result<std::string> ServiceAccountTokenSource::Token() {
  std::lock_guard lock(mu_);
  if (!token_.empty() && clock_.Now() < refresh_at_) return token_;
  Error last = Error::Local("TokenRequestFailed", "no attempt made");
  std::chrono::milliseconds wait = options_.first_retry_wait;
  for (int attempt = 0; attempt < options_.attempts; ++attempt) {
    if (attempt > 0) {
      clock_.SleepFor(wait, {});
      wait *= 2;
    }
    std::chrono::system_clock::time_point expires_at{};
    auto token = Request(&expires_at);
    if (!token.ok()) {
      KLOG_WARNINGS("Requesting a service account token failed", "serviceAccount",
                    klog::KRef(ns_, name_), "err", token.error().message);
      last = token.error();
      continue;
    }
    // The server's expirationTimestamp against our wall clock; a lifetime that looks too short
    // is clock skew, not a short token (we asked for options_.expiration).
    auto lifetime = std::chrono::duration_cast<Clock::duration>(expires_at - clock_.WallNow());
    if (lifetime < options_.min_lifetime) lifetime = options_.min_lifetime;
    token_ = std::move(token).value();
    refresh_at_ = clock_.Now() + lifetime - lifetime * options_.leeway_percent / 100;
    return token_;
  }
  // A token still cached (it is refreshed early) beats failing every request.
  if (!token_.empty()) return token_;
  return Annotate(last, "failed to get token for " + ns_ + "/" + name_);
}

void ServiceAccountTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  token_.clear();
  refresh_at_ = {};
}

Result<std::string> ServiceAccountTokenSource::Request(
    std::chrono::system_clock::time_point* expires_at) {
  if (Status s = GetOrCreateServiceAccount(*root_, ns_, name_); !s.ok()) return s.error();
  client::Request req;
  req.verb = "POST";
  req.path = client::ResourcePath(kServiceAccounts, ns_, name_, "token");
  api::json::Value spec = api::json::Value::MakeObject();
  spec.Set("expirationSeconds", api::json::Value::Int(options_.expiration.count()));
  api::json::Value body = api::json::Value::MakeObject();
  body.Set("apiVersion", api::json::Value::String("authentication.k8s.io/v1"));
  body.Set("kind", api::json::Value::String("TokenRequest"));
  body.Set("spec", std::move(spec));
  req.body = api::json::Serialize(body);
  auto answer = root_->Do(req);
  if (!answer.ok()) return Annotate(answer.error(), "create token");
  auto parsed = api::json::Parse(*answer);
  if (!parsed.ok()) return Annotate(parsed.error(), "decode TokenRequest");
  const api::json::Value* status = parsed->Find("status");
  const api::json::Value* token = status != nullptr ? status->Find("token") : nullptr;
  const api::json::Value* expiry =
      status != nullptr ? status->Find("expirationTimestamp") : nullptr;
  if (token == nullptr || !token->is_string() || token->as_string().empty() || expiry == nullptr ||
      !expiry->is_string()) {
    return Error::Local("DecodeError",
                        "TokenRequest answer without status.token and status.expirationTimestamp");
  }
  auto when = api::ParseRFC3339(expiry->as_string());
  if (!when.ok()) return Annotate(when.error(), "status.expirationTimestamp");
  *expires_at = *when;
  return token->as_string();
}

}  // namespace kcm::app
