// Controller: a rate-limited work queue fed by sources through handlers and predicates, and N
// workers that call a Reconciler with each queued Request (controller-runtime's Controller).
// Watch may be called from any thread before or after Start; Start runs on one thread and blocks
// until stop is requested, then lets in-flight reconciles finish. Build one with
// NewControllerManagedBy (builder.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/runtime/reconciler.h"
#include "pkg/runtime/source.h"
#include "pkg/util/clock.h"
#include "pkg/util/klog_logger.h"
#include "pkg/workqueue/rate_limiter.h"

namespace kcm::runtime {

class ReactionTracker;

struct ControllerOptions {
  // Names the controller in logs, the controller_runtime_* metrics and the queue's workqueue_*
  // metrics (upstream: "deployment", "replicaset").
  std::string name;
  int max_concurrent_reconciles = 1;
  Clock* clock = nullptr;  // Not owned; null = RealClock.
  // Makes the queue's rate limiter; null = workqueue's DefaultControllerRateLimiter.
  std::function<std::unique_ptr<workqueue::RateLimiter>(Clock&)> rate_limiter;
  // Drop a request after this many rate-limited retries (the Deployment controller uses 15).
  std::optional<int> max_retries;
  // Catch exceptions a Reconciler throws, count them and requeue rate-limited. When off, an
  // exception ends the process (like an unrecovered panic).
  bool recover_panic = true;
  // How long Start waits for the sources' caches before it fails with "CacheSyncTimeout"
  // (controller-runtime's CacheSyncTimeout, default 2 min). Zero or less = wait until stopped,
  // as upstream kube-controller-manager's controllers do (WaitForNamedCacheSync); the daemon's
  // controllers use that.
  std::chrono::nanoseconds cache_sync_timeout = std::chrono::minutes(2);
  // Where its lines go: the controller's own logger, so that "Starting workers" and "Finished
  // syncing" carry its name as upstream's (logger="deployment-controller"); unnamed by default.
  klog::Logger logger;
};

class Controller {
 public:
  Controller(ControllerOptions options, std::shared_ptr<Reconciler> reconciler);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Before Start the watch is remembered and started by Start; after Start it starts at once.
  Status Watch(std::shared_ptr<Source> source, std::shared_ptr<EventHandler> handler,
               std::vector<Predicate> predicates = {});

  // Starts the sources, waits for their caches (failing after cache_sync_timeout, if one is
  // set), runs the workers, and blocks until `stop`. Then stops handing out work, lets in-flight
  // reconciles finish and returns. Returns OK only after `stop`; an error (already started, a
  // source that fails to start or sync in time) means the controller never ran its workers.
  // Reconcilers get `stop` and should start no write once it is requested.
  Status Start(std::stop_token stop);

  // The queue exists from Start on (null before); for handlers and tests.
  Queue* queue();
  // Adds a key to the queue as an event handler would (the reaction starts now, unless one is
  // pending for the key). Thread-safe, and safe to keep: a no-op before Start and after the
  // controller is destroyed. For what wakes a request outside the informer handlers (a reconcile
  // that returned AwaitWake).
  std::function<void(const std::string& key)> Enqueuer();
  const std::string& name() const { return options_.name; }

 private:
  struct PendingWatch {
    std::shared_ptr<Source> source;
    std::shared_ptr<EventHandler> handler;
    std::vector<Predicate> predicates;
  };
  struct Metrics;

  void Worker(std::stop_token stop);
  void ReconcileHandler(const Queue::Item& item, std::stop_token stop);

  ControllerOptions options_;
  Clock& clock_;
  std::shared_ptr<Reconciler> reconciler_;
  std::unique_ptr<Metrics> metrics_;

  std::mutex mu_;
  bool started_ = false;
  std::stop_token stop_;  // The Start call's token, for watches added later.
  // Declared before watches_ so that sources (and their handlers, which hold the queue) are
  // destroyed first.
  std::unique_ptr<Queue> queue_;
  std::vector<PendingWatch> watches_;

  // What Enqueuer's functions add to: the queue while this controller has one.
  struct QueueHandle {
    std::mutex mu;
    Queue* queue = nullptr;
  };
  const std::shared_ptr<QueueHandle> handle_ = std::make_shared<QueueHandle>();

  // controller_reaction_*, continued across the reconciles of a key (docs/operating.md).
  std::unique_ptr<ReactionTracker> reactions_;
};

}  // namespace kcm::runtime
