#include "pkg/runtime/reaction_tracker.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace kcm::runtime {
namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

ReactionTracker::ReactionTracker(const std::string& controller, Clock& clock) : clock_(clock) {
  // Ours (upstream has none): a reaction, from the event handler's enqueue of a key to the
  // first write request of the reconcile it caused; its SLI part, which leaves out the waits
  // that are not the controller's own time (as kubelet_pod_start_sli_duration_seconds leaves
  // out image pulls); and those waits by reason. Per reaction, duration = sli + the waits.
  static const std::vector<double> buckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015,
      0.02,   0.03,    0.05,   0.075, 0.1,   0.25,  0.5,   1,     2.5,    5,    10};
  static const metrics::HistogramVec reaction(
      "controller_reaction_duration_seconds",
      "Seconds from the event that queued a request to the first write request its "
      "reconciliation sent, per controller, waits included",
      {"controller"}, buckets);
  static const metrics::HistogramVec sli(
      "controller_reaction_sli_duration_seconds",
      "controller_reaction_duration_seconds less the waits in "
      "controller_reaction_wait_duration_seconds: the controller's own part of a reaction "
      "(queue wait for a free worker, reconciliation up to its first write, client rate "
      "limiter), per controller",
      {"controller"}, buckets);
  static const metrics::HistogramVec waits(
      "controller_reaction_wait_duration_seconds",
      "Seconds a reaction waited outside the controller's own work, per controller and "
      "reason: key_in_flight (behind a reconciliation of the same key already running), "
      "stale_cache (for the informers to apply the controller's own writes), retry_backoff "
      "(a rate-limited requeue); observed for reactions that waited so",
      {"controller", "reason"}, buckets);
  duration_ = reaction.With({controller});
  sli_ = sli.With({controller});
  wait_key_in_flight_ = waits.With({controller, "key_in_flight"});
  wait_stale_cache_ = waits.With({controller, "stale_cache"});
  wait_retry_backoff_ = waits.With({controller, "retry_backoff"});
}

ReactionTracker::~ReactionTracker() = default;

ReactionTracker::Reconcile ReactionTracker::Begin(const workqueue::RateLimitingQueue::Item& item) {
  std::optional<Reaction> reaction;
  {
    std::lock_guard lock(mu_);
    if (auto it = pending_.find(item.key); it != pending_.end()) {
      reaction = it->second;
      pending_.erase(it);
    }
  }
  if (reaction) {
    // Parked from the end of the last reconcile until the key was ready again (the wake's or
    // the retry timer's add, or an event's); from then on it waited for a worker, its own time.
    const Clock::duration parked =
        std::max(Clock::duration::zero(), item.ready_at - reaction->parked_at);
    (reaction->parked_for_wake ? reaction->stale_cache : reaction->retry_backoff) += parked;
  } else if (item.added_at) {
    reaction.emplace();
    reaction->start = *item.added_at;
    // Added while a worker held the key: ready only once that reconcile was done.
    reaction->key_in_flight = std::max(Clock::duration::zero(), item.ready_at - *item.added_at);
  }
  return Reconcile(*this, item.key, std::move(reaction));
}

ReactionTracker::Reconcile::Reconcile(ReactionTracker& tracker, std::string key,
                                      std::optional<Reaction> reaction)
    : tracker_(tracker), key_(std::move(key)), reaction_(std::move(reaction)) {
  if (reaction_) {
    probe_.emplace([&tracker, r = *reaction_] { tracker.Observe(r); });
  }
  probe_scope_.emplace(probe_ ? &*probe_ : nullptr);
}

ReactionTracker::Reconcile::~Reconcile() = default;

void ReactionTracker::Reconcile::CarryOver(bool for_wake) {
  if (!probe_ || probe_->fired()) return;
  reaction_->parked_at = tracker_.clock_.Now();
  reaction_->parked_for_wake = for_wake;
  std::lock_guard lock(tracker_.mu_);
  tracker_.pending_[key_] = *reaction_;
}

void ReactionTracker::Observe(const Reaction& r) {
  const Clock::duration total = clock_.Now() - r.start;
  const Clock::duration waited = r.key_in_flight + r.stale_cache + r.retry_backoff;
  duration_.Observe(Seconds(total));
  sli_.Observe(Seconds(std::max(Clock::duration::zero(), total - waited)));
  if (r.key_in_flight > Clock::duration::zero())
    wait_key_in_flight_.Observe(Seconds(r.key_in_flight));
  if (r.stale_cache > Clock::duration::zero()) wait_stale_cache_.Observe(Seconds(r.stale_cache));
  if (r.retry_backoff > Clock::duration::zero()) {
    wait_retry_backoff_.Observe(Seconds(r.retry_backoff));
  }
}

}  // namespace kcm::runtime
