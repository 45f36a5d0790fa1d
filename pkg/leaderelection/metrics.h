// Leader election metrics with upstream names (L5/M3): leader_election_master_status{name}
// (1 while leading, 0 otherwise) and leader_election_slowpath_total{name}. Thread-safe.
#pragma once

#include <string>

#include "pkg/metrics/metrics.h"

namespace kcm::leaderelection {

class LeaderMetrics {
 public:
  explicit LeaderMetrics(const std::string& name);
  void LeaderOn() const { status_.Set(1); }
  void LeaderOff() const { status_.Set(0); }
  void SlowpathExercised() const { slowpath_.Inc(); }

 private:
  metrics::Gauge status_;
  metrics::Counter slowpath_;
};

}  // namespace kcm::leaderelection
