#include "pkg/server/always_allow_paths.h"

#include <algorithm>

namespace kcm::server {
namespace {

// Upstream compares paths with their leading '/' trimmed (strings.TrimPrefix: one at most).
std::string_view TrimSlash(std::string_view p) {
  if (!p.empty() && p.front() == '/') p.remove_prefix(1);
  return p;
}

}  // namespace

Result<AlwaysAllowPaths> AlwaysAllowPaths::Parse(const std::vector<std::string>& entries) {
  AlwaysAllowPaths out;
  for (const std::string& entry : entries) {
    std::string_view p = TrimSlash(entry);
    if (p.empty()) {  // "/" (or ""): the root path only
      out.exact_.emplace_back();
      continue;
    }
    if (p.substr(0, p.size() - 1).find('*') != std::string_view::npos) {
      return Error::Local("InvalidAlwaysAllowPath",
                          "only trailing * allowed in \"" + std::string(p) + "\"");
    }
    if (p.back() == '*') {
      out.prefixes_.emplace_back(p.substr(0, p.size() - 1));
    } else {
      out.exact_.emplace_back(p);
    }
  }
  return out;
}

bool AlwaysAllowPaths::Matches(std::string_view path) const {
  std::string_view p = TrimSlash(path);
  if (std::find(exact_.begin(), exact_.end(), p) != exact_.end()) return true;
  return std::any_of(prefixes_.begin(), prefixes_.end(), [&](const std::string& prefix) {
    return p.substr(0, prefix.size()) == prefix;
  });
}

}  // namespace kcm::server
