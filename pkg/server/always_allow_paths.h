// --authorization-always-allow-paths: the paths served to anyone, credentials or none, with
// upstream's matching (k8s.io/apiserver pkg/authorization/path NewAuthorizer): an entry is an
// exact path or, ending in '*', a prefix; the leading '/' is optional on both sides ("metrics"
// and "/metrics" are one entry); "/" or "" is the root path; "*" alone is every path. Pure, no
// OpenSSL, so the flag validation in cmd/ can use it without linking the server. Immutable once
// parsed; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::server {

class AlwaysAllowPaths {
 public:
  AlwaysAllowPaths() = default;  // matches nothing

  // A '*' anywhere but at the end is an error, worded as upstream's: only trailing * allowed in
  // "a*b" (the entry without its leading '/').
  static Result<AlwaysAllowPaths> Parse(const std::vector<std::string>& entries);

  // `path` is the request's path without its query.
  bool Matches(std::string_view path) const;

 private:
  std::vector<std::string> exact_;     // without the leading '/'
  std::vector<std::string> prefixes_;  // without the leading '/' and the trailing '*'
};

}  // namespace kcm::server
