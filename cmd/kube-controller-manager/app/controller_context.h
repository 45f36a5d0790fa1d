// ControllerContext: what every controller's start function gets (upstream's ControllerContext):
// the options, a client builder giving each controller its own client, the one shared informer
// factory, the event broadcaster and the stop signal. Built once by Run; read-only afterwards.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/rest_config.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/record/event_broadcaster.h"
#include "pkg/util/clock.h"

namespace kcm::app {

// Gives each controller its own RestClient (own token bucket, user agent "<base>/<name>"),
// like upstream's SimpleControllerClientBuilder. Thread-safe.
class ClientBuilder {
 public:
  explicit ClientBuilder(client::RestConfig base) : base_(std::move(base)) {}
  // `timeout` bounds each request (0 = none); the leader-election client needs one no longer
  // than the renew deadline, so a hung request cannot outlive the lease.
  Result<std::shared_ptr<client::RestClient>> ClientFor(
      const std::string& name,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) const;
  const client::RestConfig& base() const { return base_; }

 private:
  client::RestConfig base_;
};

struct ControllerContext {
  const Options& options;
  const ClientBuilder& client_builder;
  informers::SharedInformerFactory& informer_factory;
  record::EventBroadcaster& event_broadcaster;
  Clock& clock;
  std::stop_token stop;
};

// A started controller: Run blocks until stop, then returns once its in-flight work finished.
class RunnableController {
 public:
  virtual ~RunnableController() = default;
  virtual void Run(std::stop_token stop) = 0;
};

// Builds a controller from the context; its informers are registered on the factory, so the
// caller starts the factory after every InitFunc ran.
using InitFunc = std::function<Result<std::unique_ptr<RunnableController>>(ControllerContext&)>;

// The controllers this binary runs, by canonical name ("deployment", "replicaset").
std::map<std::string, InitFunc> NewControllerInitializers();

// The informers' resync period: min × (1 + rand[0,1)), one draw per process (upstream
// ResyncPeriod).
Clock::duration ResyncPeriod(std::chrono::nanoseconds min_resync_period);

}  // namespace kcm::app
