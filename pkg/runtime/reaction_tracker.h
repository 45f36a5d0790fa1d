// ReactionTracker: the controller_reaction_* metrics of one controller (docs/operating.md). A
// reaction runs from the event handler's enqueue of a key to the first write request of the
// reconcile it caused; the waits that are not the controller's own time (behind a reconcile of
// the same key, for the informers to apply our own writes, in a rate-limited retry) are observed
// apart and left out of the SLI part. The Controller begins one Reconcile per queued item on the
// worker thread; a reconcile that writes nothing and asks to come back hands its reaction to the
// next reconcile of the key. Thread-safe; each Reconcile belongs to its worker thread.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "pkg/metrics/first_write.h"
#include "pkg/metrics/metrics.h"
#include "pkg/util/clock.h"
#include "pkg/workqueue/rate_limiting_queue.h"

namespace kcm::runtime {

class ReactionTracker {
  struct Reaction {
    Clock::time_point start;          // The event handler's Add.
    Clock::duration key_in_flight{};  // Behind a reconcile of the same key already running.
    Clock::duration stale_cache{};    // Parked until the informers applied our own writes.
    Clock::duration retry_backoff{};  // Parked in a rate-limited requeue.
    // While parked (between reconciles): since when, and whether for a wake (stale_cache) or
    // for the rate limiter (retry_backoff).
    Clock::time_point parked_at;
    bool parked_for_wake = false;
  };

 public:
  // `controller` labels the metrics; `clock` must outlive the tracker.
  ReactionTracker(const std::string& controller, Clock& clock);
  ~ReactionTracker();
  ReactionTracker(const ReactionTracker&) = delete;
  ReactionTracker& operator=(const ReactionTracker&) = delete;

  // One reconcile's part of a reaction. While it lives, the calling thread's first write request
  // ends the reaction (metrics::ScopedFirstWriteProbe).
  class Reconcile {
   public:
    ~Reconcile();
    Reconcile(const Reconcile&) = delete;
    Reconcile& operator=(const Reconcile&) = delete;

    // The reconcile asked to come back without having written: rate-limited (`for_wake` false:
    // the parked time is retry_backoff) or awaiting a wake (stale_cache). Its reaction goes on
    // in the next reconcile of the key, parked from now. A reconcile that is done, or comes back
    // after a fixed delay (a timer), ends its reaction unrecorded by not calling this.
    void CarryOver(bool for_wake);

   private:
    friend class ReactionTracker;
    Reconcile(ReactionTracker& tracker, std::string key, std::optional<Reaction> reaction);

    ReactionTracker& tracker_;
    const std::string key_;
    std::optional<Reaction> reaction_;
    std::optional<metrics::FirstWriteProbe> probe_;
    std::optional<metrics::ScopedFirstWriteProbe> probe_scope_;
  };

  // Begins the reconcile of `item` on the calling thread: continues the reaction the key's last
  // reconcile carried over (counting the time it was parked as a wait), else starts one from the
  // event that queued it (none for an item a timer added).
  Reconcile Begin(const workqueue::RateLimitingQueue::Item& item);

 private:
  void Observe(const Reaction& r);

  Clock& clock_;
  metrics::Histogram duration_, sli_, wait_key_in_flight_, wait_stale_cache_, wait_retry_backoff_;
  // Reactions whose reconcile ended without a write and asked to come back: the next reconcile
  // of the key continues them.
  std::mutex mu_;
  std::unordered_map<std::string, Reaction> pending_;
};

}  // namespace kcm::runtime
