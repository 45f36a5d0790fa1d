// The User-Agent header (rest.DefaultKubernetesUserAgent, behaviour 1.6):
// "<binary>/<version> (<os>/<arch>) kubernetes/<commit>", plus "/<controller-name>" per client.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kcm::client {

struct UserAgentInfo {
  std::string binary = "kube-controller-manager";
  std::string version;  // e.g. "v1.31.0"; anything after the first '-' is dropped; "" = unknown
  std::string os = "linux";
  std::string arch = "amd64";
  std::string commit;  // shortened to 7 characters; "" = unknown
};

std::string DefaultUserAgent(const UserAgentInfo& info = {});

// rest.AddUserAgent: "<base>/<name>".
std::string AddUserAgent(std::string_view base, std::string_view name);

}  // namespace kcm::client
