#include "pkg/leaderelection/metrics.h"

namespace kcm::leaderelection {

LeaderMetrics::LeaderMetrics(const std::string& name) {
  // Constructing a *Vec again is cheap and merges into the family registered first.
  const metrics::GaugeVec status(
      "leader_election_master_status",
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
      "indicates master. 'name' is the string used to identify the lease. Please make sure to "
      "group by name.",
      {"name"});
  const metrics::CounterVec slowpath(
      "leader_election_slowpath_total",
      "Total number of slow path exercised in renewing leader leases. 'name' is the string used "
      "to identify the lease. Please make sure to group by name.",
      {"name"});
  // With() creates the series at 0. No Set(0) here: it would clobber a leading elector of the
  // same name in this process.
  status_ = status.With({name});
  slowpath_ = slowpath.With({name});
}

}  // namespace kcm::leaderelection
