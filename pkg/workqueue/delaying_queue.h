// DelayingQueue (upstream workqueue.DelayingInterface): a Queue that can also add a key once a
// delay has passed on the Clock. Thread-safe; one background thread moves due keys into the queue.
#pragma once

#include <mutex>
#include <queue>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pkg/workqueue/metrics.h"
#include "pkg/workqueue/queue.h"

namespace kcm::workqueue {

class DelayingQueue : public Queue {
 public:
  explicit DelayingQueue(QueueConfig config = {});
  ~DelayingQueue() override;

  // Adds key once delay has passed. delay <= 0 adds at once. Either way the add stamps no event
  // time (Queue::Item): a delayed add is a retry or a timer, not an event. A key already waiting
  // keeps the earlier of its two ready times. Ignored after shutdown; counts in
  // workqueue_retries_total.
  void AddAfter(const std::string& key, Clock::duration delay);
  // Keys waiting for their delay to pass (not yet in the queue).
  int NumWaiting() const;

  void ShutDown() override;
  void ShutDownWithDrain() override;

 private:
  struct Waiting {
    Clock::time_point ready_at;
    uint64_t seq;  // Breaks ties in insertion order, so equal ready times stay FIFO.
    std::string key;
  };
  struct LaterFirst {
    bool operator()(const Waiting& a, const Waiting& b) const {
      return a.ready_at != b.ready_at ? a.ready_at > b.ready_at : a.seq > b.seq;
    }
  };

  void WaitingLoop(std::stop_token stop);
  void StopWaitingLoop();

  RetryMetrics retry_metrics_;

  mutable std::mutex waiting_mu_;  // Lock order: waiting_mu_ before the Queue's own lock.
  // Min-heap on ready time. A key's earlier entry supersedes later ones: only entries whose
  // ready_at matches ready_at_by_key_ are live; stale ones are dropped when they reach the top.
  std::priority_queue<Waiting, std::vector<Waiting>, LaterFirst> waiting_;
  std::unordered_map<std::string, Clock::time_point> ready_at_by_key_;
  uint64_t next_seq_ = 0;
  // Wakes the loop's current sleep when an earlier key arrives or on shutdown. The loop sleeps on
  // the Clock with this token, so the wakeup works the same for RealClock and FakeClock.
  std::stop_source wake_;
  Clock::time_point sleeping_until_ = Clock::time_point::max();

  std::jthread waiting_loop_;  // Declared last: stops before the state above is destroyed.
};

}  // namespace kcm::workqueue
