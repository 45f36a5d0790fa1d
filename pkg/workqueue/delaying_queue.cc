#include "pkg/workqueue/delaying_queue.h"

#include <algorithm>

namespace kcm::workqueue {
namespace {

// Upper bound on one sleep of the waiting loop (upstream's heartbeat). The loop is woken
// explicitly for earlier keys, so this only bounds how far ahead it ever asks the Clock to sleep.
constexpr Clock::duration kMaxWait = std::chrono::seconds(10);

}  // namespace

DelayingQueue::DelayingQueue(QueueConfig config) : Queue(config), retry_metrics_(config.name) {
  waiting_loop_ = std::jthread([this](std::stop_token stop) { WaitingLoop(stop); });
}

DelayingQueue::~DelayingQueue() {
  DelayingQueue::ShutDown();
  waiting_loop_.join();
}

void DelayingQueue::AddAfter(const std::string& key, Clock::duration delay) {
  if (ShuttingDown()) return;
  retry_metrics_.Retry();
  if (delay <= Clock::duration::zero()) {
    // Not an event's enqueue (a retry whose limiter allowed it at once): no reaction starts here.
    AddDelayed(key);
    return;
  }
  std::lock_guard lock(waiting_mu_);
  Clock::time_point now = clock().Now();
  Clock::time_point ready_at =
      delay >= Clock::time_point::max() - now ? Clock::time_point::max() : now + delay;
  auto [it, inserted] = ready_at_by_key_.try_emplace(key, ready_at);
  if (!inserted) {
    if (ready_at >= it->second) return;  // The earlier ready time wins.
    it->second = ready_at;
  }
  waiting_.push(Waiting{ready_at, next_seq_++, key});
  if (ready_at < sleeping_until_) wake_.request_stop();
}

int DelayingQueue::NumWaiting() const {
  std::lock_guard lock(waiting_mu_);
  return static_cast<int>(ready_at_by_key_.size());
}

void DelayingQueue::ShutDown() {
  Queue::ShutDown();
  StopWaitingLoop();
}

void DelayingQueue::ShutDownWithDrain() {
  // Stop feeding the queue first; keys still waiting for their delay are dropped, as upstream.
  StopWaitingLoop();
  Queue::ShutDownWithDrain();
}

void DelayingQueue::StopWaitingLoop() {
  waiting_loop_.request_stop();
  // Under the lock so the loop either sees the stop request before it sleeps or sleeps on the
  // token cancelled here.
  std::lock_guard lock(waiting_mu_);
  wake_.request_stop();
}

void DelayingQueue::WaitingLoop(std::stop_token stop) {
  while (true) {
    std::stop_token wake;
    Clock::time_point deadline;
    {
      std::lock_guard lock(waiting_mu_);
      if (stop.stop_requested()) return;
      Clock::time_point now = clock().Now();
      while (!waiting_.empty() && waiting_.top().ready_at <= now) {
        Waiting due = waiting_.top();
        waiting_.pop();
        auto it = ready_at_by_key_.find(due.key);
        if (it == ready_at_by_key_.end() || it->second != due.ready_at) continue;  // Superseded.
        ready_at_by_key_.erase(it);
        AddDelayed(due.key);
      }
      deadline = now + kMaxWait;
      if (!waiting_.empty()) deadline = std::min(deadline, waiting_.top().ready_at);
      wake_ = std::stop_source();
      wake = wake_.get_token();
      sleeping_until_ = deadline;
    }
    clock().SleepUntil(deadline, wake);
  }
}

}  // namespace kcm::workqueue
