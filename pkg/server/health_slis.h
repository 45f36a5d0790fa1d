// The health checks' SLI metrics, served at /metrics/slis apart from /metrics, as upstream's
// component-base metrics/prometheus/slis (SLIMetricsWithReset): `kubernetes_healthcheck`
// {name, type} is 1 or 0 by a check's last result, `kubernetes_healthchecks_total`
// {name, status, type} counts results, and `process_start_time_seconds` dates the series. `type`
// is the endpoint that ran the check (healthz, livez, readyz). Owned by one SecureServer, not
// global: a DELETE of /metrics/slis resets it, as upstream's handler does. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace kcm::server {

class HealthSlis {
 public:
  HealthSlis();
  ~HealthSlis();
  HealthSlis(const HealthSlis&) = delete;
  HealthSlis& operator=(const HealthSlis&) = delete;

  // One check's result on one endpoint (upstream's slis.ObserveHealthcheck).
  void Observe(std::string_view check, std::string_view endpoint, bool ok);
  // Drops every series, process_start_time_seconds too (upstream's registry Reset on DELETE).
  void Reset();
  // The Prometheus text exposition of the three families.
  std::string SerializeText() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kcm::server
