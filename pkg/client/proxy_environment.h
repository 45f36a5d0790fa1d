// ProxyEnvironment: the proxy settings read once from the environment, as net/http's
// ProxyFromEnvironment reads them (HTTPS_PROXY for https URLs, HTTP_PROXY for http ones, NO_PROXY
// for the exceptions; upper case before lower case), handed to libcurl explicitly on every
// request. Left to itself libcurl would read the environment again on each request, and it never
// exempts loopback, which net/http always does. NO_PROXY's entries are matched by libcurl
// (CURLOPT_NOPROXY: host names with their subdomains, "*", CIDR ranges); one difference from
// net/http: an entry with a leading dot also matches the bare domain.
#pragma once

#include <string>
#include <string_view>

namespace kcm::client {

struct ProxyEnvironment {
  std::string http_proxy;   // "" = none
  std::string https_proxy;  // "" = none
  // NO_PROXY with loopback appended (localhost, 127.0.0.0/8, ::1).
  std::string no_proxy;

  static ProxyEnvironment FromEnvironment();

  // The proxy for a request to `url` ("" = direct; NO_PROXY is applied by libcurl).
  const std::string& ForUrl(std::string_view url) const {
    return url.starts_with("https://") ? https_proxy : http_proxy;
  }
};

}  // namespace kcm::client
