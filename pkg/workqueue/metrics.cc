#include "pkg/workqueue/metrics.h"

#include <algorithm>

namespace kcm::workqueue {
namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Upstream bounds: 10 ns, 100 ns, ... 10 s.
std::vector<double> LatencyBuckets() {
  return metrics::ExponentialBuckets(1e-8, 10, 10);
}

}  // namespace

QueueMetrics::QueueMetrics(const std::string& name, const Clock& clock)
    : clock_(clock), enabled_(!name.empty()) {
  if (!enabled_) return;
  // The registry merges families by name, so every queue shares one family per metric.
  depth_ = metrics::GaugeVec("workqueue_depth", "Current depth of the workqueue.", {"name"})
               .With({name});
  adds_ = metrics::CounterVec("workqueue_adds_total",
                              "Total number of adds the workqueue handled (deduplicated adds "
                              "are not counted).",
                              {"name"})
              .With({name});
  queue_latency_ = metrics::HistogramVec("workqueue_queue_duration_seconds",
                                         "Seconds an item waits in the workqueue before a "
                                         "worker takes it.",
                                         {"name"}, LatencyBuckets())
                       .With({name});
  work_duration_ = metrics::HistogramVec("workqueue_work_duration_seconds",
                                         "Seconds a worker spends processing an item.", {"name"},
                                         LatencyBuckets())
                       .With({name});
  unfinished_work_seconds_ =
      metrics::GaugeVec("workqueue_unfinished_work_seconds",
                        "Seconds of work in progress not yet observed by work_duration; large "
                        "values mean stuck workers.",
                        {"name"})
          .With({name});
  longest_running_processor_ =
      metrics::GaugeVec("workqueue_longest_running_processor_seconds",
                        "Seconds the longest-running worker of the workqueue has been busy.",
                        {"name"})
          .With({name});
}

void QueueMetrics::Add(const std::string& key) {
  if (!enabled_) return;
  adds_.Inc();
  depth_.Inc();
  add_times_.try_emplace(key, clock_.Now());
}

void QueueMetrics::Get(const std::string& key) {
  if (!enabled_) return;
  Clock::time_point now = clock_.Now();
  depth_.Dec();
  processing_start_times_[key] = now;
  if (auto it = add_times_.find(key); it != add_times_.end()) {
    queue_latency_.Observe(Seconds(now - it->second));
    add_times_.erase(it);
  }
}

void QueueMetrics::Done(const std::string& key) {
  if (!enabled_) return;
  if (auto it = processing_start_times_.find(key); it != processing_start_times_.end()) {
    work_duration_.Observe(Seconds(clock_.Now() - it->second));
    processing_start_times_.erase(it);
  }
}

void QueueMetrics::UpdateUnfinishedWork() {
  if (!enabled_) return;
  Clock::time_point now = clock_.Now();
  Clock::duration total{0};
  Clock::duration oldest{0};
  for (const auto& [key, started] : processing_start_times_) {
    Clock::duration age = now - started;
    total += age;
    oldest = std::max(oldest, age);
  }
  unfinished_work_seconds_.Set(Seconds(total));
  longest_running_processor_.Set(Seconds(oldest));
}

RetryMetrics::RetryMetrics(const std::string& name) {
  if (name.empty()) return;
  retries_ = metrics::CounterVec("workqueue_retries_total",
                                 "Total number of retries the workqueue handled.", {"name"})
                 .With({name});
}

}  // namespace kcm::workqueue
