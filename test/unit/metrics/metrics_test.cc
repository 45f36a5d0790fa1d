#include "pkg/metrics/metrics.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "pkg/metrics/first_write.h"
#include "pkg/metrics/process.h"

namespace kcm::metrics {
namespace {

TEST(MetricsTest, CounterVecChildrenAreSharedByLabels) {
  CounterVec vec("kcm_test_events_total", "test counter", {"name"});
  vec.With({"a"}).Inc();
  vec.With({"a"}).Inc(2);
  vec.With({"b"}).Inc();
  EXPECT_EQ(vec.With({"a"}).Value(), 3);
  EXPECT_EQ(vec.With({"b"}).Value(), 1);
}

TEST(MetricsTest, SameFamilyTwiceMerges) {
  CounterVec first("kcm_test_merge_total", "merged", {"k"});
  CounterVec second("kcm_test_merge_total", "merged", {"k"});
  first.With({"x"}).Inc();
  EXPECT_EQ(second.With({"x"}).Value(), 1);
}

TEST(MetricsTest, HistogramAndGaugeAppearInTextFormat) {
  HistogramVec h("kcm_test_duration_seconds", "durations", {"verb"},
                 ExponentialBuckets(0.001, 10, 4));
  h.With({"GET"}).Observe(0.05);
  GaugeVec g("kcm_test_depth", "depth", {"name"});
  g.With({"q"}).Set(7);
  std::string text = SerializeText();
  EXPECT_NE(text.find("kcm_test_duration_seconds_bucket{verb=\"GET\",le=\"0.1\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kcm_test_depth{name=\"q\"} 7"), std::string::npos) << text;
  EXPECT_EQ(h.With({"GET"}).Count(), 1u);
}

TEST(MetricsTest, WrongLabelCountThrows) {
  CounterVec vec("kcm_test_labels_total", "labels", {"a", "b"});
  EXPECT_THROW(vec.With({"only-one"}), std::invalid_argument);
}

}  // namespace
}  // namespace kcm::metrics

namespace kcm::metrics {
namespace {

// M4: process metrics carry Go's names and real values.
TEST(ProcessMetricsTest, ReportsResidentMemoryCpuAndFds) {
  UpdateProcessMetrics();
  std::string text = SerializeText();
  for (const char* name : {"process_resident_memory_bytes ", "process_cpu_seconds_total ",
                           "process_start_time_seconds ", "process_open_fds ", "process_max_fds ",
                           "process_virtual_memory_bytes "}) {
    EXPECT_NE(text.find(std::string("\n") + name), std::string::npos) << name;
  }
  GaugeVec rss("process_resident_memory_bytes", "Resident memory size in bytes.", {});
  EXPECT_GT(rss.With(std::vector<std::string>{}).Value(), 1e6);  // A test binary is > 1 MB.
  GaugeVec start("process_start_time_seconds",
                 "Start time of the process since unix epoch in seconds.", {});
  EXPECT_GT(start.With(std::vector<std::string>{}).Value(), 1.6e9);
}

// A probe fires once; scopes nest and restore the outer probe; a thread without a probe (or a
// null one) records nothing.
TEST(FirstWriteProbeTest, FiresOnceAndScopesNest) {
  NoteWriteSent();  // No probe installed: nothing to tell.
  int outer_fired = 0, inner_fired = 0;
  FirstWriteProbe outer([&] { ++outer_fired; });
  FirstWriteProbe inner([&] { ++inner_fired; });
  {
    ScopedFirstWriteProbe a(&outer);
    {
      ScopedFirstWriteProbe b(&inner);
      NoteWriteSent();
      NoteWriteSent();
      {
        ScopedFirstWriteProbe none(nullptr);
        EXPECT_EQ(CurrentFirstWriteProbe(), nullptr);
        NoteWriteSent();
      }
    }
    EXPECT_EQ(CurrentFirstWriteProbe(), &outer);
    EXPECT_EQ(outer_fired, 0);
    NoteWriteSent();
  }
  EXPECT_EQ(CurrentFirstWriteProbe(), nullptr);
  EXPECT_EQ(inner_fired, 1);
  EXPECT_EQ(outer_fired, 1);
  EXPECT_TRUE(outer.fired());
}

}  // namespace
}  // namespace kcm::metrics

namespace kcm::metrics {
namespace {

double ThreadCpuCounter(const std::string& name) {
  return CounterVec("kcm_thread_cpu_seconds_total",
                    "Total user and system CPU time spent in seconds by the named thread.",
                    {"thread"})
      .With({name})
      .Value();
}

// Spins until this thread has used `seconds` of CPU by its own clock.
void Burn(double seconds) {
  timespec ts{};
  auto cpu = [&ts] {
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  };
  const double until = cpu() + seconds;
  volatile uint64_t sink = 0;
  while (cpu() < until) sink = sink + 1;
}

// kcm_thread_cpu_seconds_total follows a named thread's CPU time from /proc while it runs, keeps
// it once the thread is gone, and adds a later thread of the same name; kcm_threads counts them.
TEST(ProcessMetricsTest, ThreadCpuCountsANamedThreadsTimeAndKeepsItAfterTheThreadEnds) {
  const std::string name = "test-burner";
  EXPECT_EQ(ThreadCpuCounter(name), 0);
  std::atomic<bool> burnt{false}, done{false};
  std::thread burner([&] {
    ThreadCpu tracked(name);
    Burn(0.2);
    burnt = true;
    while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!burnt) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  UpdateProcessMetrics();
  const double live = ThreadCpuCounter(name);
  EXPECT_GE(live, 0.15);  // /proc counts in clock ticks (10 ms): 0.2 s reads as 0.19 or more
  EXPECT_GE(GaugeVec("kcm_threads", "Number of threads of the process.", {})
                .With(std::vector<std::string>{})
                .Value(),
            2);
  done = true;
  burner.join();
  UpdateProcessMetrics();
  EXPECT_GE(ThreadCpuCounter(name), live);

  std::thread again([&] {
    ThreadCpu tracked(name);
    Burn(0.2);
  });
  again.join();
  UpdateProcessMetrics();
  EXPECT_GE(ThreadCpuCounter(name), live + 0.15);
  EXPECT_EQ(ThreadCpuCounter("never-made"), 0);
}

}  // namespace
}  // namespace kcm::metrics
