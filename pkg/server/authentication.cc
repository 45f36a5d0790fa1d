#include "pkg/server/authentication.h"

#include <algorithm>

#include "pkg/util/strings.h"

namespace kcm::server {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Extra keys are percent-encoded by proxies (header names cannot carry every key); a malformed
// escape keeps the key as sent, as upstream's unescapeExtraKey does.
std::string UnescapeExtraKey(const std::string& key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i] != '%') {
      out += key[i];
      continue;
    }
    if (i + 2 >= key.size()) return key;
    int hi = HexValue(key[i + 1]), lo = HexValue(key[i + 2]);
    if (hi < 0 || lo < 0) return key;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace

bool ProxyNameAllowed(const std::string& common_name, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return true;
  return std::find(allowed.begin(), allowed.end(), common_name) != allowed.end();
}

std::optional<UserInfo> UserFromRequestHeaders(const HeaderList& headers,
                                               const RequestHeaderOptions& options) {
  UserInfo user;
  for (const std::string& name : options.username_headers) {
    for (const auto& [field, value] : headers) {
      if (!EqualsIgnoreCase(field, name)) continue;
      user.name = std::string(Trim(value));
      break;  // The first field of that name, as Go's Header.Get.
    }
    if (!user.name.empty()) break;
  }
  if (user.name.empty()) return std::nullopt;
  for (const std::string& name : options.group_headers) {
    for (const auto& [field, value] : headers) {
      if (EqualsIgnoreCase(field, name)) user.groups.push_back(value);
    }
  }
  for (const std::string& prefix : options.extra_headers_prefix) {
    const std::string lower_prefix = Lower(prefix);
    for (const auto& [field, value] : headers) {
      const std::string lower_field = Lower(field);
      if (lower_prefix.empty() || lower_field.size() <= lower_prefix.size() ||
          lower_field.rfind(lower_prefix, 0) != 0) {
        continue;
      }
      user.extra[UnescapeExtraKey(lower_field.substr(lower_prefix.size()))].push_back(value);
    }
  }
  return user;
}

UserInfo UserFromCertificate(const std::string& common_name,
                             const std::vector<std::string>& organizations) {
  UserInfo user;
  user.name = common_name;
  user.groups = organizations;
  return user;
}

void AddAuthenticatedGroup(UserInfo& user) {
  const std::string group = "system:authenticated";
  if (std::find(user.groups.begin(), user.groups.end(), group) == user.groups.end()) {
    user.groups.push_back(group);
  }
}

}  // namespace kcm::server
