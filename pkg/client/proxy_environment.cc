#include "pkg/client/proxy_environment.h"

#include <cstdlib>

namespace kcm::client {
namespace {

std::string FirstSet(const char* upper, const char* lower) {
  for (const char* name : {upper, lower}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') return v;
  }
  return "";
}

}  // namespace

ProxyEnvironment ProxyEnvironment::FromEnvironment() {
  ProxyEnvironment env;
  env.http_proxy = FirstSet("HTTP_PROXY", "http_proxy");
  env.https_proxy = FirstSet("HTTPS_PROXY", "https_proxy");
  env.no_proxy = FirstSet("NO_PROXY", "no_proxy");
  // net/http's useProxy never proxies "localhost" or a loopback address.
  if (!env.no_proxy.empty()) env.no_proxy += ',';
  env.no_proxy += "localhost,127.0.0.0/8,::1";
  return env;
}

}  // namespace kcm::client
