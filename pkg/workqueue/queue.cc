#include "pkg/workqueue/queue.h"

namespace kcm::workqueue {

Queue::Queue(QueueConfig config)
    : name_(std::move(config.name)),
      clock_(config.clock != nullptr ? *config.clock : RealClock::Get()),
      metrics_(name_, clock_) {
  // An unnamed queue has nothing to report, so it does not pay for the thread (as upstream).
  if (metrics_.enabled()) {
    metrics_updater_ =
        std::jthread([this](std::stop_token stop) { UpdateUnfinishedWorkLoop(stop); });
  }
}

Queue::~Queue() {
  Queue::ShutDown();
  if (metrics_updater_.joinable()) metrics_updater_.join();
}

void Queue::Add(const std::string& key) {
  AddInternal(key, /*stamp=*/true);
}

void Queue::AddDelayed(const std::string& key) {
  AddInternal(key, /*stamp=*/false);
}

void Queue::AddInternal(const std::string& key, bool stamp) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return;
    auto [it, inserted] = dirty_.try_emplace(key);
    if (!inserted) {
      if (stamp && it->second.added_at == kNotAdded) it->second.added_at = clock_.Now();
      return;
    }
    const Clock::time_point now = clock_.Now();
    if (stamp) it->second.added_at = now;
    // Counted even when a worker holds the key: depth is the number of keys that need processing.
    metrics_.Add(key);
    if (processing_.contains(key)) return;  // Done will queue it.
    it->second.ready_at = now;
    queue_.push_back(key);
  }
  // Outside the lock, so the woken worker does not block straight on our mutex.
  cv_.NotifyOne();
}

int Queue::Len() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(queue_.size());
}

std::optional<std::string> Queue::Get() {
  std::optional<Item> item = GetItem();
  if (!item) return std::nullopt;
  return std::move(item->key);
}

std::optional<Queue::Item> Queue::GetItem() {
  std::unique_lock lock(mu_);
  cv_.Wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;
  Item item{std::move(queue_.front()), std::nullopt, {}};
  queue_.pop_front();
  metrics_.Get(item.key);
  processing_.insert(item.key);
  if (auto it = dirty_.find(item.key); it != dirty_.end()) {
    if (it->second.added_at != kNotAdded) item.added_at = it->second.added_at;
    item.ready_at = it->second.ready_at;
    dirty_.erase(it);
  }
  return item;
}

void Queue::Done(const std::string& key) {
  bool requeued = false;
  bool drained = false;
  {
    std::lock_guard lock(mu_);
    if (processing_.erase(key) == 0) return;
    metrics_.Done(key);
    if (auto it = dirty_.find(key); it != dirty_.end()) {
      // Added while it was being processed: hand it out again (even during shutdown, so the drain
      // sees the latest state of the key).
      it->second.ready_at = clock_.Now();
      queue_.push_back(key);
      requeued = true;
    } else {
      drained = processing_.empty();
    }
  }
  // Outside the lock, as in AddInternal.
  if (requeued) cv_.NotifyOne();
  if (drained) drained_cv_.NotifyAll();
}

void Queue::ShutDown() {
  {
    std::lock_guard lock(mu_);
    drain_ = false;
    shutting_down_ = true;
  }
  cv_.NotifyAll();
  drained_cv_.NotifyAll();
  metrics_updater_.request_stop();
}

void Queue::ShutDownWithDrain() {
  {
    std::lock_guard lock(mu_);
    drain_ = true;
    shutting_down_ = true;
  }
  cv_.NotifyAll();
  // Outside the lock: stop callbacks run here and wake the updater's sleep on the Clock.
  metrics_updater_.request_stop();
  std::unique_lock lock(mu_);
  drained_cv_.Wait(lock, [this] { return processing_.empty() || !drain_; });
}

bool Queue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

void Queue::UpdateUnfinishedWorkLoop(std::stop_token stop) {
  Clock::time_point next = clock_.Now() + kUnfinishedWorkUpdatePeriod;
  while (clock_.SleepUntil(next, stop)) {
    {
      std::lock_guard lock(mu_);
      if (shutting_down_) return;
      metrics_.UpdateUnfinishedWork();
    }
    // Ticker semantics: keep the phase, but skip ticks missed while the clock jumped ahead.
    next += kUnfinishedWorkUpdatePeriod;
    if (Clock::time_point now = clock_.Now(); next <= now) next = now + kUnfinishedWorkUpdatePeriod;
  }
}

}  // namespace kcm::workqueue
