// The endpoints operators read besides /metrics and the health checks (S3), installed on the
// daemon's SecureServer as upstream kube-controller-manager's Run installs them
// (controller-manager app.NewBaseHandler, statusz.Install, flagz.Install): /configz always,
// /statusz and /flagz under the ComponentStatusz and ComponentFlagz gates, /debug/flags/v (and
// its index at /debug/flags) with --profiling. All behind the server's delegated authn/authz.
#pragma once

#include <map>
#include <string>

#include "cmd/kube-controller-manager/app/options.h"
#include "cmd/kube-controller-manager/app/run.h"
#include "pkg/server/secure_server.h"

namespace kcm::app {

// `flag_values`: every flag's effective value (CommandLine::FlagValues), for /flagz.
void InstallOperatorEndpoints(server::SecureServer& server, const Options& options,
                              const BuildInfo& build,
                              const std::map<std::string, std::string>& flag_values);

// The verbosity setter behind PUT /debug/flags/v (upstream component-base logs.GlogSetter): a
// decimal uint32, else strconv.ParseUint's error; the success message is upstream's.
Result<std::string> SetVerbosity(const std::string& value);

}  // namespace kcm::app
