// ControllerContext: what every controller's start function gets (upstream's ControllerContext):
// the options, a client builder giving each controller its own client, the one shared informer
// factory, the event broadcaster and the stop signal. Built once by Run; read-only afterwards.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/controller/namespace_fence.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/record/event_broadcaster.h"
#include "pkg/record/event_sink.h"
#include "pkg/util/clock.h"

namespace kcm::app {

// Gives each controller its own RestClient (own token bucket, user agent "<base>/<name>"),
// like upstream's SimpleControllerClientBuilder. Thread-safe.
class ClientBuilder {
 public:
  // `use_service_account_credentials`: --use-service-account-credentials. `share_clients`: every
  // call with the same name (and timeout) returns the same client, so its token bucket is one per
  // process, whoever asks for it again.
  explicit ClientBuilder(client::RestConfig base, bool use_service_account_credentials = false,
                         bool share_clients = false)
      : base_(std::move(base)),
        use_service_account_credentials_(use_service_account_credentials),
        share_clients_(share_clients) {}
  // A client with the controller manager's own credentials (upstream's root client builder:
  // informers, events, leader election). `timeout` bounds each request (0 = none); the
  // leader-election client needs one no longer than the renew deadline, so a hung request cannot
  // outlive the lease.
  Result<std::shared_ptr<client::RestClient>> ClientFor(
      const std::string& name,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) const;
  // The client a controller writes with, `name` being its service account name
  // ("deployment-controller"). With service account credentials (upstream's
  // DynamicControllerClientBuilder): the service account kube-system/<name> is fetched or created
  // now, the client carries no credentials of the controller manager's own (no client
  // certificate, no token) and authenticates with TokenRequest tokens of that account. Otherwise
  // ClientFor(name). Errors: the service account cannot be fetched or created.
  Result<std::shared_ptr<client::RestClient>> ControllerClientFor(const std::string& name) const;
  const client::RestConfig& base() const { return base_; }

 private:
  Result<std::shared_ptr<client::RestClient>> NewClientFor(const std::string& name,
                                                           std::chrono::milliseconds timeout) const;
  Result<std::shared_ptr<client::RestClient>> NewControllerClientFor(const std::string& name) const;

  client::RestConfig base_;
  bool use_service_account_credentials_ = false;
  bool share_clients_ = false;
  mutable std::mutex mu_;
  // With share_clients_: by "<name>/<timeout ms>" (ClientFor) or "controller/<name>".
  mutable std::map<std::string, std::shared_ptr<client::RestClient>> shared_;
};

struct ControllerContext {
  const Options& options;
  const ClientBuilder& client_builder;
  informers::SharedInformerFactory& informer_factory;
  record::EventBroadcaster& event_broadcaster;
  Clock& clock;
  std::stop_token stop;
  // Writes events with the daemon's events client (for NewControllerEventBroadcaster).
  std::shared_ptr<record::EventSink> events_sink;
  // A sharded replica's: the namespaces its writers may write to (null = every namespace).
  std::shared_ptr<controller::NamespaceFence> namespaces = nullptr;
};

// A controller's own event broadcaster, as upstream's Deployment and ReplicaSet controllers have
// (record.NewBroadcaster, StartRecordingToSink with the controller's clientset): its events are
// written through ctx.events_sink but spend the tokens of `controller_client`'s rate limiter, so
// --kube-api-qps bounds a controller's API writes and its events together, as upstream. Keep the
// broadcaster alive as long as the controller (RunnableController's keep_alive); its destructor
// drops what is still queued and cancels the write under way (EventBroadcaster::Shutdown).
std::shared_ptr<record::EventBroadcaster> NewControllerEventBroadcaster(
    const ControllerContext& ctx, std::shared_ptr<client::RestClient> controller_client);

// A built controller as the daemon runs it: Run blocks until stop, then returns OK once its
// in-flight work finished. Returning before stop (with an error, e.g. its caches never synced
// within --controller-cache-sync-timeout) means the controller failed. It owns the controller an
// InitFunc built (the Deployment and ReplicaSet controllers alike: `Status Run(std::stop_token)`)
// and what that controller's writers reference but do not own (an event recorder, the
// broadcaster that writes its events), which it destroys after the controller.
class RunnableController final {
 public:
  template <typename C>
  explicit RunnableController(std::unique_ptr<C> controller,
                              std::vector<std::shared_ptr<const void>> keep_alive = {})
      : keep_alive_(std::move(keep_alive)),
        run_([c = std::shared_ptr<C>(std::move(controller))](std::stop_token stop) {
          return c->Run(stop);
        }) {}
  Status Run(std::stop_token stop) { return run_(std::move(stop)); }

 private:
  std::vector<std::shared_ptr<const void>> keep_alive_;  // destroyed after the controller
  std::function<Status(std::stop_token)> run_;           // owns the controller
};

using NamedController = std::pair<std::string, std::unique_ptr<RunnableController>>;

// What /readyz reports about the controllers. Thread-safe.
struct ControllerReadiness {
  std::atomic<int> enabled{0};  // controllers that should be running
  std::atomic<int> running{0};  // whose Run was started and has not returned
  std::atomic<bool> informers_synced{false};
  // Ok only when every enabled controller runs (not merely some).
  Status ControllersRunning() const;
  Status InformersSynced() const;
};

// Runs each controller's Run on its own thread until `stop` (upstream runs every controller
// until the leader's context ends). `after_start` runs on the calling thread once every thread
// is started (the daemon starts the informers and waits for their caches there); its token also
// ends when a controller fails. A controller whose Run returns before `stop` has failed (upstream
// treats a controller that cannot start as fatal: StartControllers returns an error and the
// process exits): the others are stopped, every thread is joined, and the error names it.
// Returns OK after `stop`, once every Run returned.
Status SuperviseControllers(std::vector<NamedController>& controllers,
                            const std::function<void(std::stop_token)>& after_start,
                            ControllerReadiness& readiness, std::stop_token stop);

// Builds a controller from the context; its informers are registered on the factory, so the
// caller starts the factory after every InitFunc ran.
using InitFunc = std::function<Result<std::unique_ptr<RunnableController>>(ControllerContext&)>;

// The controllers this binary runs, by canonical name ("deployment", "replicaset").
std::map<std::string, InitFunc> NewControllerInitializers();

// The informers' resync period: min × (1 + rand[0,1)), one draw per process (upstream
// ResyncPeriod).
Clock::duration ResyncPeriod(std::chrono::nanoseconds min_resync_period);

}  // namespace kcm::app
