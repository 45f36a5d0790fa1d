#include "pkg/client/client_metrics.h"

namespace kcm::client {
namespace {

std::vector<double> LatencyBuckets() {
  return {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};
}

}  // namespace

const ClientMetrics& GetClientMetrics() {
  static const ClientMetrics m{
      metrics::CounterVec("rest_client_requests_total",
                          "Number of HTTP requests, partitioned by status code, method, and host.",
                          {"code", "method", "host"}),
      metrics::HistogramVec("rest_client_request_duration_seconds",
                            "Request latency in seconds. Broken down by verb, and host.",
                            {"verb", "host"}, LatencyBuckets()),
      metrics::HistogramVec("rest_client_rate_limiter_duration_seconds",
                            "Client side rate limiter latency in seconds. Broken down by verb, "
                            "and host.",
                            {"verb", "host"}, LatencyBuckets()),
      metrics::CounterVec("rest_client_request_retries_total",
                          "Number of request retries, partitioned by status code, verb, and host.",
                          {"code", "verb", "host"}),
  };
  return m;
}

}  // namespace kcm::client
