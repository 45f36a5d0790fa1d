// Process metrics with Go's client_golang names (daemon.md M4): resident memory, virtual
// memory, CPU seconds, start time, open and max fds. UpdateProcessMetrics refreshes them from
// /proc; call it before each scrape. Thread-safe.
#pragma once

namespace kcm::metrics {

void UpdateProcessMetrics();

// When this process started, in seconds since the epoch (/proc: boot time + start ticks), 0 if
// /proc cannot tell; what process_start_time_seconds reports, also for /statusz and
// /metrics/slis.
double ProcessStartTimeSeconds();

}  // namespace kcm::metrics
