#include "pkg/workqueue/metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "pkg/metrics/metrics.h"
#include "pkg/util/testing/fake_clock.h"
#include "pkg/workqueue/delaying_queue.h"
#include "pkg/workqueue/queue.h"
#include "pkg/workqueue/rate_limiting_queue.h"
#include "test/unit/workqueue/wait_until.h"

namespace kcm::workqueue {
namespace {

using testing::WaitUntil;
using namespace std::chrono_literals;

// Handles onto the global families, to read what a queue named `name` recorded. Each test uses
// its own queue name because the registry lives for the whole test binary.
struct Family {
  explicit Family(const std::string& name)
      : depth(metrics::GaugeVec("workqueue_depth", "", {"name"}).With({name})),
        adds(metrics::CounterVec("workqueue_adds_total", "", {"name"}).With({name})),
        retries(metrics::CounterVec("workqueue_retries_total", "", {"name"}).With({name})),
        queue_duration(metrics::HistogramVec("workqueue_queue_duration_seconds", "", {"name"},
                                             metrics::ExponentialBuckets(1e-8, 10, 10))
                           .With({name})),
        work_duration(metrics::HistogramVec("workqueue_work_duration_seconds", "", {"name"},
                                            metrics::ExponentialBuckets(1e-8, 10, 10))
                          .With({name})),
        unfinished(
            metrics::GaugeVec("workqueue_unfinished_work_seconds", "", {"name"}).With({name})),
        longest(metrics::GaugeVec("workqueue_longest_running_processor_seconds", "", {"name"})
                    .With({name})) {}

  metrics::Gauge depth;
  metrics::Counter adds;
  metrics::Counter retries;
  metrics::Histogram queue_duration;
  metrics::Histogram work_duration;
  metrics::Gauge unfinished;
  metrics::Gauge longest;
};

// A queue name not used before in this process, so --gtest_repeat starts every test from zero.
std::string UniqueName(const std::string& base) {
  static std::atomic<int> next{0};
  return base + "-" + std::to_string(next.fetch_add(1));
}

bool Near(double a, double b) {
  return std::abs(a - b) < 1e-9;
}

// 7.5
TEST(WorkqueueMetricsTest, AddsTotalCountsOnlyAddsThatWereNotDeduplicated) {
  const std::string name = UniqueName("wq-adds");
  Queue q({.name = name});
  Family m(name);
  q.Add("ns/a");
  q.Add("ns/a");
  q.Add("ns/b");
  EXPECT_EQ(m.adds.Value(), 2);
  EXPECT_EQ(m.depth.Value(), 2);
}

// 7.5: depth counts keys that need processing, including one re-added while a worker holds it
// (upstream counts it at Add, not when Done re-queues it).
TEST(WorkqueueMetricsTest, DepthFollowsAddAndGet) {
  const std::string name = UniqueName("wq-depth");
  Queue q({.name = name});
  Family m(name);
  q.Add("ns/a");
  ASSERT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(m.depth.Value(), 0);
  q.Add("ns/a");
  EXPECT_EQ(m.depth.Value(), 1);
  EXPECT_EQ(m.adds.Value(), 2);
  q.Done("ns/a");
  EXPECT_EQ(m.depth.Value(), 1);
  ASSERT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(m.depth.Value(), 0);
}

// 7.5
TEST(WorkqueueMetricsTest, QueueAndWorkDurationsAreObservedOnTheClock) {
  const std::string name = UniqueName("wq-durations");
  FakeClock clock;
  Queue q({.name = name, .clock = &clock});
  Family m(name);
  q.Add("ns/a");
  clock.Step(2s);
  q.Add("ns/a");  // Deduplicated: the wait still counts from the first add.
  ASSERT_EQ(q.Get(), "ns/a");
  EXPECT_EQ(m.queue_duration.Count(), 1u);
  EXPECT_DOUBLE_EQ(m.queue_duration.Sum(), 2.0);
  clock.Step(3s);
  q.Done("ns/a");
  EXPECT_EQ(m.work_duration.Count(), 1u);
  EXPECT_DOUBLE_EQ(m.work_duration.Sum(), 3.0);
}

// 7.5: the two in-progress gauges are refreshed every 500 ms of Clock time by the queue's thread.
TEST(WorkqueueMetricsTest, UnfinishedWorkAndLongestRunningProcessorUpdatedPeriodically) {
  const std::string name = UniqueName("wq-unfinished");
  FakeClock clock;
  Queue q({.name = name, .clock = &clock});
  Family m(name);
  q.Add("ns/a");
  q.Add("ns/b");
  ASSERT_EQ(q.Get(), "ns/a");
  ASSERT_TRUE(clock.WaitForWaiters(1));  // The updater sleeps until 500 ms.
  clock.Step(200ms);
  ASSERT_EQ(q.Get(), "ns/b");
  EXPECT_EQ(m.longest.Value(), 0) << "nothing is published before the first tick";
  clock.Step(300ms);
  ASSERT_TRUE(WaitUntil([&] { return Near(m.longest.Value(), 0.5); })) << m.longest.Value();
  EXPECT_DOUBLE_EQ(m.unfinished.Value(), 0.8);  // 0.5 s of ns/a + 0.3 s of ns/b.

  q.Done("ns/a");
  q.Done("ns/b");
  ASSERT_TRUE(clock.WaitForWaiters(1));
  clock.Step(500ms);
  ASSERT_TRUE(WaitUntil([&] { return Near(m.unfinished.Value(), 0); })) << m.unfinished.Value();
  EXPECT_EQ(m.longest.Value(), 0);
}

// 7.5: every AddAfter (so every AddRateLimited) counts as a retry, even with no delay; nothing
// counts once the queue is shutting down.
TEST(WorkqueueMetricsTest, RetriesTotalCountsAddAfterAndAddRateLimited) {
  const std::string name = UniqueName("wq-retries");
  FakeClock clock;
  RateLimitingQueue q({.name = name, .clock = &clock});
  Family m(name);
  q.Add("ns/a");
  EXPECT_EQ(m.retries.Value(), 0);
  q.AddAfter("ns/b", 0s);
  q.AddAfter("ns/c", 1s);
  q.AddRateLimited("ns/d");
  EXPECT_EQ(m.retries.Value(), 3);
  q.ShutDown();
  q.AddAfter("ns/e", 1s);
  EXPECT_EQ(m.retries.Value(), 3);
}

// 7.5 / M1: upstream family names, label `name`, buckets 1e-8 ... 10 s in the exposition.
TEST(WorkqueueMetricsTest, ExposedWithUpstreamNamesAndBuckets) {
  const std::string name = UniqueName("deployment");
  DelayingQueue q({.name = name});
  q.AddAfter("ns/a", 0s);
  ASSERT_EQ(q.Get(), "ns/a");
  q.Done("ns/a");
  std::string text = metrics::SerializeText();
  const std::string label = "{name=\"" + name + "\"";
  for (const std::string& series :
       {"workqueue_depth" + label + "}", "workqueue_adds_total" + label + "}",
        "workqueue_retries_total" + label + "} 1",
        "workqueue_queue_duration_seconds_bucket" + label + ",le=\"1e-08\"}",
        "workqueue_queue_duration_seconds_bucket" + label + ",le=\"10\"}",
        "workqueue_work_duration_seconds_count" + label + "} 1",
        "workqueue_unfinished_work_seconds" + label + "}",
        "workqueue_longest_running_processor_seconds" + label + "}"}) {
    EXPECT_NE(text.find(series), std::string::npos) << series << "\n" << text;
  }
  EXPECT_EQ(text.find("le=\"100\""), std::string::npos) << "10 s is the last finite bucket";
}

// 7.5: an unnamed queue records nothing.
TEST(WorkqueueMetricsTest, UnnamedQueueRecordsNothing) {
  RateLimitingQueue q;
  q.Add("ns/a");
  q.AddAfter("ns/b", 0s);
  ASSERT_TRUE(q.Get().has_value());
  std::string text = metrics::SerializeText();
  EXPECT_EQ(text.find("name=\"\""), std::string::npos) << text;
}

}  // namespace
}  // namespace kcm::workqueue
