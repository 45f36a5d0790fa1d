// ProcessorListener: one per event handler. The informer appends notifications to an unbounded
// buffer without ever blocking; the listener's own thread (Run) hands them to the handler in order
// (behaviour 4.3). A NonBlocking handler has no buffer and no thread: Add calls it at once, on
// the informer's thread. Add, HasSynced and the resync accessors are safe from any thread; Run is
// called once (and returns at once for a non-blocking handler).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <variant>

#include "pkg/api/object.h"
#include "pkg/cache/resource_event_handler.h"
#include "pkg/util/clock.h"

namespace kcm::cache {

struct AddNotification {
  api::ObjectPtr obj;
  bool is_in_initial_list = false;
};
struct UpdateNotification {
  api::ObjectPtr old_obj;
  api::ObjectPtr new_obj;
};
struct DeleteNotification {
  api::ObjectPtr obj;
};
using Notification = std::variant<AddNotification, UpdateNotification, DeleteNotification>;

class ProcessorListener final : public ResourceEventHandlerRegistration {
 public:
  // upstream_has_synced: the informer's HasSynced; this listener is synced once that is true and
  // every initial-list Add it was given has been handled.
  ProcessorListener(std::shared_ptr<ResourceEventHandler> handler,
                    Clock::duration requested_resync_period, Clock::duration resync_period,
                    Clock::time_point now, std::function<bool()> upstream_has_synced);

  void Add(Notification notification);
  // Delivers notifications until stop is requested; undelivered ones are dropped then.
  void Run(std::stop_token stop);

  bool HasSynced() const override;
  // The handler is called inline by Add (ResourceEventHandler::NonBlocking).
  bool non_blocking() const { return non_blocking_; }
  // Whether the resync notifications being distributed are for this listener: set by
  // SharedProcessor::ShouldResync before the Sync deltas are queued, read as they are handed out.
  bool syncing() const { return syncing_.load(std::memory_order_relaxed); }
  void set_syncing(bool syncing) { syncing_.store(syncing, std::memory_order_relaxed); }

  bool ShouldResync(Clock::time_point now) const;
  void DetermineNextResync(Clock::time_point now);
  void SetResyncPeriod(Clock::duration period);
  Clock::duration resync_period() const;
  Clock::duration requested_resync_period() const { return requested_resync_period_; }

 private:
  void Dispatch(const Notification& notification);

  const std::shared_ptr<ResourceEventHandler> handler_;
  const Clock::duration requested_resync_period_;
  const std::function<bool()> upstream_has_synced_;
  const bool non_blocking_;
  std::atomic<bool> syncing_{false};

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Notification> pending_;
  // Run is blocked waiting for a notification (Add wakes it only then).
  bool run_waiting_ = false;
  // Initial-list Adds given to this listener but not yet handled.
  int initial_outstanding_ = 0;
  Clock::duration resync_period_;
  Clock::time_point next_resync_;
};

// The effective resync period of a handler: 0 if either is 0, else the larger one (a handler
// cannot resync more often than the informer checks).
Clock::duration DetermineResyncPeriod(Clock::duration desired, Clock::duration check);

}  // namespace kcm::cache
