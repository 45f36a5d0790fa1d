#include "pkg/client/in_cluster_config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kcm::client {

InClusterOptions InClusterOptions::FromEnvironment() {
  InClusterOptions o;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) o.service_host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) o.service_port = p;
  return o;
}

Result<RestConfig> InClusterConfig(const InClusterOptions& options) {
  if (options.service_host.empty() || options.service_port.empty()) {
    return Error::Local("InvalidConfig",
                        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
                        "KUBERNETES_SERVICE_PORT must be defined");
  }
  std::ifstream token(options.token_file, std::ios::binary);
  if (!token) {
    return Error::Local("InvalidConfig",
                        "in-cluster token file " + options.token_file + " cannot be read");
  }
  std::ostringstream ss;
  ss << token.rdbuf();
  RestConfig out;
  // net.JoinHostPort: an IPv6 literal needs brackets.
  const bool ipv6 = options.service_host.find(':') != std::string::npos;
  out.host = "https://" + (ipv6 ? "[" + options.service_host + "]" : options.service_host) + ":" +
             options.service_port;
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  out.bearer_token = std::move(t);  // fallback if a later re-read fails
  out.bearer_token_file = options.token_file;
  // As upstream: an unreadable CA is not fatal here (the system roots are used instead).
  if (std::ifstream(options.ca_file).good()) out.ca_file = options.ca_file;
  return out;
}

}  // namespace kcm::client
