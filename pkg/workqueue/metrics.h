// Queue metrics: the upstream `workqueue_*` Prometheus family for one named queue (label `name`).
// A queue with an empty name records nothing. QueueMetrics is not thread-safe: the queue calls it
// under its own lock. RetryMetrics is thread-safe.
#pragma once

#include <string>
#include <unordered_map>

#include "pkg/metrics/metrics.h"
#include "pkg/util/clock.h"

namespace kcm::workqueue {

// How often a queue refreshes workqueue_unfinished_work_seconds and
// workqueue_longest_running_processor_seconds (upstream: 500 ms).
inline constexpr Clock::duration kUnfinishedWorkUpdatePeriod = std::chrono::milliseconds(500);

class QueueMetrics {
 public:
  // An empty name disables every metric (and the queue skips its periodic update thread).
  QueueMetrics(const std::string& name, const Clock& clock);

  bool enabled() const { return enabled_; }

  // A key entered the queue without being deduplicated: adds_total and depth go up, and the key's
  // wait starts (kept from the first add if it is already waiting).
  void Add(const std::string& key);
  // A worker took the key: depth goes down, its wait is observed, its processing starts.
  void Get(const std::string& key);
  // A worker finished the key: its processing time is observed.
  void Done(const std::string& key);
  // Recomputes the two gauges that expose work still in progress (stuck workers show here long
  // before work_duration sees them).
  void UpdateUnfinishedWork();

 private:
  const Clock& clock_;
  bool enabled_;
  metrics::Gauge depth_;
  metrics::Counter adds_;
  metrics::Histogram queue_latency_;
  metrics::Histogram work_duration_;
  metrics::Gauge unfinished_work_seconds_;
  metrics::Gauge longest_running_processor_;
  std::unordered_map<std::string, Clock::time_point> add_times_;
  std::unordered_map<std::string, Clock::time_point> processing_start_times_;
};

// workqueue_retries_total for one named queue: every AddAfter (and so every AddRateLimited) on a
// queue that is not shutting down counts as a retry, as upstream.
class RetryMetrics {
 public:
  explicit RetryMetrics(const std::string& name);
  void Retry() const { retries_.Inc(); }
  double Value() const { return retries_.Value(); }

 private:
  metrics::Counter retries_;  // Default-constructed (a no-op) when the name is empty.
};

}  // namespace kcm::workqueue
