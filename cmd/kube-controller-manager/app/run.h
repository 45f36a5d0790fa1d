// Run: the daemon's life after flag parsing — client config, serving, leader election, the
// controller context, the selected controllers, the informers — until stop. Called once from
// main; returns the process exit code (0 after a graceful stop, 1 on a fatal error or a lost
// lease).
#pragma once

#include <map>
#include <stop_token>
#include <string>

#include "cmd/kube-controller-manager/app/options.h"

namespace kcm::app {

struct BuildInfo {
  std::string version;  // "v1.37.2+cpp.0.1.0": the Kubernetes release, our build as metadata
  std::string commit;   // git commit, "" when unknown
  // The Kubernetes release whose behaviour and API we implement, major.minor ("1.37"): the
  // emulation version upstream reports.
  std::string emulation_version;
  std::string compiler;  // "clang 19.1.7", for kubernetes_build_info
};

// `flag_values`: every flag's effective value, for /flagz (CommandLine::FlagValues).
int Run(const Options& options, const BuildInfo& build,
        const std::map<std::string, std::string>& flag_values, std::stop_token stop);

}  // namespace kcm::app
