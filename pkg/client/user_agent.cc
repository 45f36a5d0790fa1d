#include "pkg/client/user_agent.h"

namespace kcm::client {
namespace {

// Upstream keeps only the release part of a version ("v1.31.0-rc.1" -> "v1.31.0").
std::string AdjustVersion(const std::string& v) {
  if (v.empty()) return "unknown";
  return v.substr(0, v.find('-'));
}

std::string AdjustCommit(const std::string& c) {
  if (c.empty()) return "unknown";
  return c.substr(0, 7);
}

std::string AdjustCommand(const std::string& binary) {
  // Only the base name, as upstream does with os.Args[0].
  auto slash = binary.rfind('/');
  std::string base = slash == std::string::npos ? binary : binary.substr(slash + 1);
  return base.empty() ? "unknown" : base;
}

}  // namespace

std::string DefaultUserAgent(const UserAgentInfo& info) {
  return AdjustCommand(info.binary) + "/" + AdjustVersion(info.version) + " (" + info.os + "/" +
         info.arch + ") kubernetes/" + AdjustCommit(info.commit);
}

std::string AddUserAgent(std::string_view base, std::string_view name) {
  std::string out(base);
  out += '/';
  out += name;
  return out;
}

}  // namespace kcm::client
