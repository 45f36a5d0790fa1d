// Process metrics with Go's client_golang names (daemon.md M4): resident memory, virtual
// memory, CPU seconds, start time, open and max fds; and ours: the process's threads
// (kcm_threads) and the CPU seconds of the threads that say so (kcm_thread_cpu_seconds_total,
// labelled by the thread's name). UpdateProcessMetrics refreshes them from /proc; call it before
// each scrape. Thread-safe.
#pragma once

#include <sys/types.h>

#include <string>

namespace kcm::metrics {

void UpdateProcessMetrics();

// Made on a thread, for its life: UpdateProcessMetrics reports that thread's CPU time as
// kcm_thread_cpu_seconds_total{thread=name} (read from /proc at each scrape: nothing is counted
// on the thread itself). When it goes, the time the thread used so far stays in the counter, so
// a thread of the same name made again adds to it. The client's event loop reports its busy time
// so (docs/design/client-transport.md, "Loop count and ownership"). Destroy it on the thread
// that made it.
class ThreadCpu {
 public:
  explicit ThreadCpu(std::string name);
  ~ThreadCpu();
  ThreadCpu(const ThreadCpu&) = delete;
  ThreadCpu& operator=(const ThreadCpu&) = delete;

 private:
  std::string name_;
  pid_t tid_;
};

// When this process started, in seconds since the epoch (/proc: boot time + start ticks), 0 if
// /proc cannot tell; what process_start_time_seconds reports, also for /statusz and
// /metrics/slis.
double ProcessStartTimeSeconds();

}  // namespace kcm::metrics
