// Queue (upstream workqueue.Type): a deduplicating FIFO of string keys with the dirty/processing
// sets that keep one key from being processed by two workers at once. Thread-safe: any number of
// producers and workers may call it concurrently.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "pkg/util/clock.h"
#include "pkg/util/futex_condition.h"
#include "pkg/workqueue/metrics.h"

namespace kcm::workqueue {

struct QueueConfig {
  // Value of the `name` metric label; empty records no metrics (as upstream).
  std::string name;
  // Not owned; must outlive the queue. Null means RealClock::Get().
  Clock* clock = nullptr;
};

class Queue {
 public:
  explicit Queue(QueueConfig config = {});
  // Shuts down and joins the queue's threads. Workers blocked in Get must be joined first.
  virtual ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // Marks key as needing processing. A no-op when the key is already waiting; when a worker holds
  // the key it is queued again only once that worker calls Done. Ignored after shutdown. The
  // first Add since the key was last handed out stamps its event time (see Item).
  void Add(const std::string& key);
  // Keys waiting to be handed out (excludes keys held by workers).
  int Len() const;
  // Blocks until a key is available and hands it to the caller, who must call Done(key) when
  // finished. Returns nullopt once the queue is shut down and drained of waiting keys.
  std::optional<std::string> Get();

  // A key handed out, with the time of the first Add since it was last handed out: what started
  // the controller's reaction (an event handler's enqueue). Unset when only delayed re-adds
  // (AddAfter's timer: retries, requeue-after) queued it, which no event caused. `ready_at` is
  // when the key last became available to a worker: the Add itself, or, for a key added while a
  // worker held it, that worker's Done. So ready_at - added_at (when positive) is the wait behind
  // a sync of the same key already in flight, and the Get time - ready_at the wait for a free
  // worker (controller_reaction_* in docs/operating.md).
  struct Item {
    std::string key;
    std::optional<Clock::time_point> added_at;
    Clock::time_point ready_at;
  };
  // Get, with the event time.
  std::optional<Item> GetItem();
  // Ends processing of key; if it was added meanwhile it is queued again. A key not held by a
  // worker is ignored.
  void Done(const std::string& key);
  // Stops accepting adds and releases blocked Get calls once the waiting keys are handed out.
  virtual void ShutDown();
  // ShutDown, then blocks until every key handed out has been marked Done. A concurrent ShutDown
  // releases the wait.
  virtual void ShutDownWithDrain();
  bool ShuttingDown() const;

 protected:
  Clock& clock() const { return clock_; }
  // Add without an event time: a delayed re-add whose delay has passed.
  void AddDelayed(const std::string& key);
  const std::string& name() const { return name_; }

 private:
  void AddInternal(const std::string& key, bool stamp);
  void UpdateUnfinishedWorkLoop(std::stop_token stop);

  // dirty_'s value for a key that no Add (only AddDelayed) queued.
  static constexpr Clock::time_point kNotAdded = Clock::time_point::min();

  const std::string name_;
  Clock& clock_;

  mutable std::mutex mu_;
  FutexCondition cv_;              // A key became available, or shutdown.
  FutexCondition drained_cv_;      // processing_ became empty, or drain was cancelled.
  std::deque<std::string> queue_;  // Keys in hand-out order; each also in dirty_.
  struct Dirty {
    Clock::time_point added_at = kNotAdded;  // The first Add (not AddDelayed), if any.
    Clock::time_point ready_at = kNotAdded;  // When it entered queue_ (Item::ready_at).
  };
  // Keys that need processing.
  std::unordered_map<std::string, Dirty> dirty_;
  std::unordered_set<std::string> processing_;  // Keys held by a worker.
  bool shutting_down_ = false;
  bool drain_ = false;
  QueueMetrics metrics_;

  // Refreshes the unfinished-work gauges; runs only for a named queue. Declared last so it stops
  // before the state it reads is destroyed.
  std::jthread metrics_updater_;
};

}  // namespace kcm::workqueue
