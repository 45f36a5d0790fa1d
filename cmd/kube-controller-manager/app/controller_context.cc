#include "cmd/kube-controller-manager/app/controller_context.h"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "cmd/kube-controller-manager/app/service_account_token_source.h"
#include "pkg/client/user_agent.h"
#include "pkg/record/rate_limited_sink.h"
#include "pkg/util/klog.h"

namespace kcm::app {

Result<std::shared_ptr<client::RestClient>> ClientBuilder::ClientFor(
    const std::string& name, std::chrono::milliseconds timeout) const {
  if (!share_clients_) return NewClientFor(name, timeout);
  std::lock_guard lock(mu_);
  auto& c = shared_[name + "/" + std::to_string(timeout.count())];
  if (c == nullptr) {
    auto made = NewClientFor(name, timeout);
    if (!made.ok()) return made.error();
    c = std::move(*made);
  }
  return c;
}

Result<std::shared_ptr<client::RestClient>> ClientBuilder::ControllerClientFor(
    const std::string& name) const {
  if (!share_clients_) return NewControllerClientFor(name);
  std::lock_guard lock(mu_);
  auto& c = shared_["controller/" + name];
  if (c == nullptr) {
    auto made = NewControllerClientFor(name);
    if (!made.ok()) return made.error();
    c = std::move(*made);
  }
  return c;
}

Result<std::shared_ptr<client::RestClient>> ClientBuilder::NewClientFor(
    const std::string& name, std::chrono::milliseconds timeout) const {
  client::RestConfig config = base_;
  if (timeout.count() > 0) config.timeout = timeout;
  config.user_agent = client::AddUserAgent(
      config.user_agent.empty() ? client::DefaultUserAgent() : config.user_agent, name);
  return client::RestClient::Create(config);
}

Result<std::shared_ptr<client::RestClient>> ClientBuilder::NewControllerClientFor(
    const std::string& name) const {
  if (!use_service_account_credentials_) return NewClientFor(name, std::chrono::milliseconds(0));
  // Token requests and the service account lookup go with our own credentials. Every request of
  // the controller waits for its token, so a TokenRequest the server does not answer must fail
  // within seconds (then retried, ServiceAccountTokenSource::Options::attempts), not after the
  // 90 s stall limit.
  auto root = NewClientFor(name + "-token-requests", std::chrono::seconds(10));
  if (!root.ok()) return root.error();
  if (Status s = GetOrCreateServiceAccount(**root, kServiceAccountNamespace, name); !s.ok()) {
    return s.error();
  }
  // rest.AnonymousClientConfig: the server and its CA stay, our own credentials go.
  client::RestConfig config = base_;
  config.cert_file.clear();
  config.cert_data.clear();
  config.key_file.clear();
  config.key_data.clear();
  config.bearer_token.clear();
  config.bearer_token_file.clear();
  config.token_source = std::make_shared<ServiceAccountTokenSource>(
      *root, kServiceAccountNamespace, name, RealClock::Get(),
      ServiceAccountTokenSource::Options{});
  config.user_agent = client::AddUserAgent(
      config.user_agent.empty() ? client::DefaultUserAgent() : config.user_agent,
      std::string("system:serviceaccount:") + kServiceAccountNamespace + ":" + name);
  return client::RestClient::Create(config);
}

std::shared_ptr<record::EventBroadcaster> NewControllerEventBroadcaster(
    const ControllerContext& ctx, std::shared_ptr<client::RestClient> controller_client) {
  auto broadcaster = std::make_shared<record::EventBroadcaster>();
  client::RateLimiter& limiter = controller_client->rate_limiter();
  broadcaster->StartRecordingToSink(std::make_shared<record::RateLimitedEventSink>(
      ctx.events_sink, limiter, std::move(controller_client), ctx.stop));
  return broadcaster;
}

Clock::duration ResyncPeriod(std::chrono::nanoseconds min_resync_period) {
  std::random_device seed;
  std::mt19937_64 rng(seed());
  double factor = std::uniform_real_distribution<double>(0.0, 1.0)(rng) + 1.0;
  return std::chrono::duration_cast<Clock::duration>(min_resync_period * factor);
}

Status ControllerReadiness::ControllersRunning() const {
  const int want = enabled.load();
  const int have = running.load();
  if (want > 0 && have == want) return OkStatus();
  return Error::Local(
      "NotRunning", std::to_string(have) + " of " + std::to_string(want) + " controllers running");
}

Status ControllerReadiness::InformersSynced() const {
  if (informers_synced) return OkStatus();
  return Error::Local("NotSynced", "informers not synced");
}

Status SuperviseControllers(std::vector<NamedController>& controllers,
                            const std::function<void(std::stop_token)>& after_start,
                            ControllerReadiness& readiness, std::stop_token stop) {
  std::stop_source run_stop;
  std::stop_callback forward(stop, [&run_stop] { run_stop.request_stop(); });
  std::mutex mu;
  std::optional<Error> failure;
  readiness.enabled = static_cast<int>(controllers.size());
  {
    std::vector<std::jthread> threads;
    threads.reserve(controllers.size());
    for (auto& [name, c] : controllers) {
      ++readiness.running;
      threads.emplace_back([&, name = name, c = c.get()] {
        Status s = c->Run(run_stop.get_token());
        --readiness.running;
        // Asked to stop (by the caller, or because another controller failed): a normal end.
        if (run_stop.stop_requested()) return;
        Error e = s.ok()
                      ? Error::Local("ControllerStopped",
                                     "controller \"" + name + "\" returned before stop")
                      : Error::Local("ControllerFailed",
                                     "controller \"" + name + "\" failed: " + s.error().ToString());
        KLOG_ERRORS(s.ok() ? "returned before stop" : s.error().ToString(),
                    s.ok() ? "Controller stopped before it was asked to" : "Controller failed",
                    "controller", name);
        {
          std::lock_guard lock(mu);
          if (!failure) failure = std::move(e);
        }
        run_stop.request_stop();
      });
    }
    if (after_start) after_start(run_stop.get_token());
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, run_stop.get_token(), [] { return false; });
  }  // Joins: every Run returns once its in-flight work finished.
  std::lock_guard lock(mu);
  if (failure) return *failure;
  return OkStatus();
}

}  // namespace kcm::app
