// Process metrics with Go's client_golang names (daemon.md M4): resident memory, virtual
// memory, CPU seconds, start time, open and max fds. UpdateProcessMetrics refreshes them from
// /proc; call it before each scrape. Thread-safe.
#pragma once

namespace kcm::metrics {

void UpdateProcessMetrics();

}  // namespace kcm::metrics
