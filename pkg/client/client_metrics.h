// The rest_client_* metrics (daemon.md M2) with upstream names, labels and buckets. Internal
// to pkg/client. Handles are thread-safe.
#pragma once

#include "pkg/metrics/metrics.h"

namespace kcm::client {

struct ClientMetrics {
  metrics::CounterVec requests_total;           // {code, method, host}
  metrics::HistogramVec request_duration;       // {verb, host}
  metrics::HistogramVec rate_limiter_duration;  // {verb, host}
  metrics::CounterVec request_retries_total;    // {code, verb, host}
};

// The families are registered on first use in the process-wide registry.
const ClientMetrics& GetClientMetrics();

// The `code` label for a request that got no HTTP answer.
inline constexpr char kErrorCodeLabel[] = "<error>";

}  // namespace kcm::client
