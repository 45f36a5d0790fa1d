// The daemon's secure server (/healthz, /readyz, /metrics, the z-pages) from the serving flags,
// with delegated authentication and authorization (upstream's SecureServingOptions and
// DelegatingAuthenticationOptions/DelegatingAuthorizationOptions).
#pragma once

#include <memory>

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/client/rest_config.h"
#include "pkg/server/secure_server.h"
#include "pkg/util/result.h"

namespace kcm::app {

// Not started: the caller adds its checks and endpoints, then starts it. `config` is the
// controller manager's own connection, used for the reviews unless
// --authentication-kubeconfig/--authorization-kubeconfig are given.
Result<std::unique_ptr<server::SecureServer>> NewSecureServer(const Options& options,
                                                              const client::RestConfig& config);

}  // namespace kcm::app
