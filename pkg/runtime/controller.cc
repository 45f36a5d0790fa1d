#include "pkg/runtime/controller.h"

#include <glog/logging.h>

#include <algorithm>
#include <exception>
#include <thread>
#include <variant>

#include "pkg/metrics/metrics.h"
#include "pkg/runtime/reaction_tracker.h"
#include "pkg/util/klog.h"
#include "pkg/workqueue/default_rate_limiters.h"

namespace kcm::runtime {

// controller-runtime's metric names and labels, resolved once per controller.
struct Controller::Metrics {
  explicit Metrics(const std::string& name) {
    static const metrics::CounterVec total("controller_runtime_reconcile_total",
                                           "Total number of reconciliations per controller",
                                           {"controller", "result"});
    static const metrics::CounterVec errors("controller_runtime_reconcile_errors_total",
                                            "Total number of reconciliation errors per controller",
                                            {"controller"});
    static const metrics::CounterVec terminal(
        "controller_runtime_terminal_reconcile_errors_total",
        "Total number of terminal reconciliation errors per controller", {"controller"});
    static const metrics::CounterVec panics("controller_runtime_reconcile_panics_total",
                                            "Total number of reconciliation panics per controller",
                                            {"controller"});
    static const metrics::HistogramVec time(
        "controller_runtime_reconcile_time_seconds",
        "Length of time per reconciliation per controller", {"controller"},
        {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
         0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
         6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60});
    static const metrics::GaugeVec workers("controller_runtime_max_concurrent_reconciles",
                                           "Maximum number of concurrent reconciles per controller",
                                           {"controller"});
    static const metrics::GaugeVec active("controller_runtime_active_workers",
                                          "Number of currently used workers per controller",
                                          {"controller"});
    success = total.With({name, "success"});
    error = total.With({name, "error"});
    requeue = total.With({name, "requeue"});
    requeue_after = total.With({name, "requeue_after"});
    reconcile_errors = errors.With({name});
    terminal_errors = terminal.With({name});
    reconcile_panics = panics.With({name});
    reconcile_time = time.With({name});
    max_concurrent = workers.With({name});
    active_workers = active.With({name});
  }
  metrics::Counter success, error, requeue, requeue_after, reconcile_errors, terminal_errors,
      reconcile_panics;
  metrics::Histogram reconcile_time;
  metrics::Gauge max_concurrent, active_workers;
};

Controller::Controller(ControllerOptions options, std::shared_ptr<Reconciler> reconciler)
    : options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : RealClock::Get()),
      reconciler_(std::move(reconciler)),
      metrics_(std::make_unique<Metrics>(options_.name)),
      reactions_(std::make_unique<ReactionTracker>(options_.name, clock_)) {
  if (options_.max_concurrent_reconciles < 1) options_.max_concurrent_reconciles = 1;
}

Controller::~Controller() {
  std::lock_guard lock(handle_->mu);
  handle_->queue = nullptr;
}

Queue* Controller::queue() {
  std::lock_guard lock(mu_);
  return queue_.get();
}

std::function<void(const std::string& key)> Controller::Enqueuer() {
  return [handle = handle_](const std::string& key) {
    std::lock_guard lock(handle->mu);
    if (handle->queue != nullptr) handle->queue->Add(key);
  };
}

Status Controller::Watch(std::shared_ptr<Source> source, std::shared_ptr<EventHandler> handler,
                         std::vector<Predicate> predicates) {
  std::unique_lock lock(mu_);
  if (!started_) {
    watches_.push_back({std::move(source), std::move(handler), std::move(predicates)});
    return OkStatus();
  }
  Queue* q = queue_.get();
  std::stop_token stop = stop_;
  lock.unlock();
  Status s = source->Start(stop, std::move(handler), std::move(predicates), *q);
  if (!s.ok()) return s;
  return OkStatus();
}

Status Controller::Start(std::stop_token stop) {
  std::vector<PendingWatch> watches;
  {
    std::lock_guard lock(mu_);
    if (started_) {
      return Error::Local("AlreadyStarted", "controller " + options_.name + " was started twice");
    }
    workqueue::RateLimitingQueueConfig qc;
    qc.name = options_.name;
    qc.clock = &clock_;
    qc.rate_limiter = options_.rate_limiter ? options_.rate_limiter(clock_)
                                            : workqueue::DefaultControllerRateLimiter(clock_);
    queue_ = std::make_unique<Queue>(std::move(qc));
    {
      std::lock_guard handle_lock(handle_->mu);
      handle_->queue = queue_.get();
    }
    started_ = true;
    stop_ = stop;
    watches = watches_;
  }
  for (auto& w : watches) {
    Status s = w.source->Start(stop, w.handler, w.predicates, *queue_);
    if (!s.ok()) {
      queue_->ShutDown();
      return Error::Local("SourceStartFailed",
                          "controller " + options_.name + ": " + s.error().message);
    }
  }

  // Wait for every source's cache, bounded by cache_sync_timeout when one is set.
  std::stop_source sync_stop;
  std::stop_callback forward(stop, [&] { sync_stop.request_stop(); });
  std::jthread timer;
  if (options_.cache_sync_timeout > std::chrono::nanoseconds::zero()) {
    timer = std::jthread(
        [&, deadline = clock_.Now() + std::chrono::duration_cast<Clock::duration>(
                                          options_.cache_sync_timeout)](std::stop_token t) {
          if (clock_.SleepUntil(deadline, t)) sync_stop.request_stop();
        });
  }
  for (auto& w : watches) {
    if (!w.source->WaitForSync(sync_stop.get_token())) {
      queue_->ShutDown();
      if (stop.stop_requested()) return OkStatus();
      return Error::Local("CacheSyncTimeout",
                          "controller " + options_.name + ": timed out waiting for caches to sync");
    }
  }
  if (timer.joinable()) {
    timer.request_stop();
    timer.join();
  }

  options_.logger.Info("Starting workers", "controller", options_.name, "workerCount",
                       options_.max_concurrent_reconciles);
  metrics_->max_concurrent.Set(options_.max_concurrent_reconciles);
  {
    // Upstream's Start waits for the stop and then shuts the queue down; here the stop's callback
    // shuts it down, so the calling thread is free to be the last worker (there is at least one:
    // the constructor raises 0 to 1, as upstream's New does) instead of a thread that only waits.
    std::stop_callback shut_down(stop, [this] {
      options_.logger.Info("Shutdown signal received, waiting for all workers to finish",
                           "controller", options_.name);
      queue_->ShutDown();
    });
    std::vector<std::jthread> workers;
    for (int i = 1; i < options_.max_concurrent_reconciles; ++i) {
      workers.emplace_back([this, stop] { Worker(stop); });
    }
    // noexcept as a worker thread's body is: a reconcile's exception that is not recovered
    // (recover_panic off) ends the process here too, rather than unwinding into the join of
    // workers whose queue was never shut down.
    [&]() noexcept { Worker(stop); }();
  }  // Workers join here: in-flight reconciles finish first.
  options_.logger.Info("All workers finished", "controller", options_.name);
  return OkStatus();
}

void Controller::Worker(std::stop_token stop) {
  while (std::optional<Queue::Item> item = queue_->GetItem()) {
    // After shutdown the queue still hands out what was waiting; that work is dropped.
    if (!stop.stop_requested()) ReconcileHandler(*item, stop);
    queue_->Done(item->key);
  }
}

void Controller::ReconcileHandler(const Queue::Item& item, std::stop_token stop) {
  const std::string& key = item.key;
  Request req = Request::FromKey(key);
  metrics_->active_workers.Inc();
  auto start = clock_.Now();
  // Its first write ends the reaction that queued the key (or one an earlier reconcile of the
  // key carried over).
  ReactionTracker::Reconcile reaction = reactions_->Begin(item);
  std::optional<Result<ReconcileResult>> outcome;
  try {
    outcome.emplace(reconciler_->Reconcile(req, stop));
  } catch (const std::exception& e) {
    if (!options_.recover_panic) throw;
    metrics_->reconcile_panics.Inc();
    options_.logger.Error(e.what(), "Observed a panic in reconciler", "controller", options_.name,
                          options_.name, klog::KRef(req.namespace_, req.name));
    outcome.emplace(Error::Local("Panic", std::string("panic: ") + e.what()));
  } catch (...) {
    if (!options_.recover_panic) throw;
    metrics_->reconcile_panics.Inc();
    options_.logger.Error("unknown exception", "Observed a panic in reconciler", "controller",
                          options_.name, options_.name, klog::KRef(req.namespace_, req.name));
    outcome.emplace(Error::Local("Panic", "panic: unknown exception"));
  }
  const auto took = clock_.Now() - start;
  metrics_->reconcile_time.Observe(std::chrono::duration<double>(took).count());
  // Upstream's syncDeployment / syncReplicaSet log this at V(4).
  options_.logger.V(4).Info("Finished syncing", "controller", options_.name, options_.name,
                            klog::KRef(req.namespace_, req.name), "duration", took);
  metrics_->active_workers.Dec();

  const Result<ReconcileResult>& r = *outcome;
  if (!r.ok()) {
    metrics_->reconcile_errors.Inc();
    metrics_->error.Inc();
    if (r.error().reason == kTerminalReason) {
      metrics_->terminal_errors.Inc();
      options_.logger.Error(r.error().ToString(), "Reconciler error (terminal)", "controller",
                            options_.name, options_.name, klog::KRef(req.namespace_, req.name));
      queue_->Forget(key);
      return;
    }
    if (options_.max_retries && queue_->NumRequeues(key) >= *options_.max_retries) {
      options_.logger.Error(r.error().ToString(), "Dropping out of the queue", "controller",
                            options_.name, options_.name, klog::KRef(req.namespace_, req.name),
                            "retries", *options_.max_retries);
      queue_->Forget(key);
      return;
    }
    options_.logger.Error(r.error().ToString(), "Reconciler error", "controller", options_.name,
                          options_.name, klog::KRef(req.namespace_, req.name));
    reaction.CarryOver(/*for_wake=*/false);
    queue_->AddRateLimited(key);
    return;
  }
  if (const auto* after = std::get_if<reconcile::RequeueAfter>(&*r);
      after != nullptr && after->delay > std::chrono::nanoseconds::zero()) {
    // Forget first so the delay is exactly the one asked for, not rate-limited.
    queue_->Forget(key);
    queue_->AddAfter(key, std::chrono::duration_cast<Clock::duration>(after->delay));
    metrics_->requeue_after.Inc();
    return;
  }
  if (std::holds_alternative<reconcile::AwaitWake>(*r)) {
    // Neither Forget nor AddRateLimited: waiting for our own writes to reach the cache says
    // nothing about whether the request fails, and the wake puts it back without delay.
    reaction.CarryOver(/*for_wake=*/true);
    metrics_->requeue.Inc();
    return;
  }
  if (std::holds_alternative<reconcile::RequeueRateLimited>(*r)) {
    reaction.CarryOver(/*for_wake=*/false);
    queue_->AddRateLimited(key);
    metrics_->requeue.Inc();
    return;
  }
  // Done, or a RequeueAfter of no delay (as controller-runtime treats RequeueAfter 0).
  queue_->Forget(key);
  metrics_->success.Inc();
}

}  // namespace kcm::runtime
