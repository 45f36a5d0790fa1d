#include "pkg/server/health_slis.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>

#include "pkg/metrics/process.h"

namespace kcm::server {

// A registry of its own rather than the process-wide one: upstream serves these from
// slis.Registry, and only /metrics/slis shows them. Reset builds a fresh registry, since
// prometheus-cpp families cannot drop all their children at once.
struct HealthSlis::State {
  std::mutex mu;
  std::unique_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Gauge>* healthcheck = nullptr;
  prometheus::Family<prometheus::Counter>* total = nullptr;

  // `with_start_time`: a reset registry stays without process_start_time_seconds, as upstream's
  // (its Reset empties every family, and the start time is set only at registration).
  void Build(bool with_start_time) {
    registry = std::make_unique<prometheus::Registry>();
    // Help texts and the [STABLE] marks as upstream's (component-base prints the stability
    // level at the front of the help).
    healthcheck = &prometheus::BuildGauge()
                       .Name("kubernetes_healthcheck")
                       .Help("[STABLE] This metric records the result of a single healthcheck.")
                       .Register(*registry);
    total = &prometheus::BuildCounter()
                 .Name("kubernetes_healthchecks_total")
                 .Help("[STABLE] This metric records the results of all healthcheck.")
                 .Register(*registry);
    if (!with_start_time) return;
    prometheus::BuildGauge()
        .Name("process_start_time_seconds")
        .Help("[ALPHA] Start time of the process since unix epoch in seconds.")
        .Register(*registry)
        .Add({})
        .Set(metrics::ProcessStartTimeSeconds());
  }
};

HealthSlis::HealthSlis() : state_(std::make_unique<State>()) {
  state_->Build(/*with_start_time=*/true);
}

HealthSlis::~HealthSlis() = default;

void HealthSlis::Observe(std::string_view check, std::string_view endpoint, bool ok) {
  std::lock_guard lock(state_->mu);
  const std::string name(check), type(endpoint);
  state_->healthcheck->Add({{"name", name}, {"type", type}}).Set(ok ? 1 : 0);
  state_->total->Add({{"name", name}, {"type", type}, {"status", ok ? "success" : "error"}})
      .Increment();
}

void HealthSlis::Reset() {
  std::lock_guard lock(state_->mu);
  state_->Build(/*with_start_time=*/false);
}

std::string HealthSlis::SerializeText() const {
  std::lock_guard lock(state_->mu);
  return prometheus::TextSerializer().Serialize(state_->registry->Collect());
}

}  // namespace kcm::server
