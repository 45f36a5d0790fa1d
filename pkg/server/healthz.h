// The health endpoints /healthz, /livez and /readyz (upstream apiserver's healthz.InstallHandler
// shape): the root runs every check ("ok", or 500 with one line per check), /<endpoint>/<name>
// runs one, ?exclude=<name> skips one, ?verbose lists them. Each check run at a root is recorded
// in the server's HealthSlis (upstream's handleRootHealth does the same). Answered on the
// server's I/O thread: checks are quick by contract. Thread-compatible: the checks are set before
// the server starts and only read after.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/server/handler.h"
#include "pkg/server/health_slis.h"
#include "pkg/util/result.h"

namespace kcm::server {

struct HealthCheck {
  std::string name;
  std::function<Status()> check;
};

struct HealthChecks {
  std::vector<HealthCheck> health;  // /healthz, /livez, /readyz
  std::vector<HealthCheck> ready;   // /readyz only
};

// "/healthz", "/livez" or "/readyz".
bool IsHealthEndpoint(std::string_view root);

// Serves `path` (whose first segment IsHealthEndpoint) with `query`; 404 for an unknown check.
Response ServeHealth(const HealthChecks& checks, HealthSlis& slis, const std::string& path,
                     std::string_view query);

}  // namespace kcm::server
