// In-cluster configuration (rest.InClusterConfig, behaviour 1.3): the API server from the service
// environment variables and the pod's service-account token and CA. Thread-safe (no state).
#pragma once

#include <string>

#include "pkg/client/rest_config.h"
#include "pkg/util/result.h"

namespace kcm::client {

struct InClusterOptions {
  std::string service_host;  // $KUBERNETES_SERVICE_HOST
  std::string service_port;  // $KUBERNETES_SERVICE_PORT
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

  // Reads the two environment variables; the paths keep their in-pod defaults.
  static InClusterOptions FromEnvironment();
};

// The token file is not read here: the transport re-reads it (cached up to a minute) so rotated
// projected tokens are picked up. The file must exist now, though, as upstream requires.
Result<RestConfig> InClusterConfig(
    const InClusterOptions& options = InClusterOptions::FromEnvironment());

}  // namespace kcm::client
