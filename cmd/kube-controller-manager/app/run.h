// Run: the daemon's life after flag parsing — client config, serving, leader election, the
// controller context, the selected controllers, the informers — until stop. Called once from
// main; returns the process exit code (0 after a graceful stop, 1 on a fatal error or a lost
// lease).
#pragma once

#include <stop_token>
#include <string>

#include "cmd/kube-controller-manager/app/options.h"

namespace kcm::app {

struct BuildInfo {
  std::string version;  // "v0.1.0"
  std::string commit;   // git commit, "" when unknown
};

int Run(const Options& options, const BuildInfo& build, std::stop_token stop);

}  // namespace kcm::app
