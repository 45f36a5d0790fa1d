// The process-wide prometheus-cpp registry. Include only where prometheus-cpp types are needed
// (metrics.cc, the HTTP server); everyone else uses pkg/metrics/metrics.h.
#pragma once

#include <prometheus/registry.h>

namespace kcm::metrics {

prometheus::Registry& GlobalRegistry();

}  // namespace kcm::metrics
