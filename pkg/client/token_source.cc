#include "pkg/client/token_source.h"

#include <fstream>
#include <sstream>

#include "pkg/util/strings.h"

namespace kcm::client {
namespace {

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Local("TokenFileUnreadable", "cannot read token file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  // Token files usually end with a newline; a header value must not.
  std::string token(Trim(ss.str(), " \t\r\n"));
  if (token.empty()) return Error::Local("TokenFileUnreadable", "token file " + path + " is empty");
  return token;
}

}  // namespace

CachedFileTokenSource::CachedFileTokenSource(std::string static_token, std::string file,
                                             Clock& clock)
    : static_token_(std::move(static_token)), file_(std::move(file)), clock_(clock) {}

Result<std::string> CachedFileTokenSource::Token() {
  if (file_.empty()) return static_token_;
  std::lock_guard lock(mu_);
  const auto now = clock_.Now();
  if (valid_ && now < expires_) return cached_;
  auto token = ReadTokenFile(file_);
  if (!token.ok()) {
    // Keep serving what we had (or the configured token) rather than failing every request
    // while a projected token is being swapped.
    if (valid_) return cached_;
    if (!static_token_.empty()) return static_token_;
    return token.error();
  }
  cached_ = std::move(token).value();
  valid_ = true;
  expires_ = now + kFileCachePeriod;
  return cached_;
}

void CachedFileTokenSource::Invalidate() {
  std::lock_guard lock(mu_);
  expires_ = Clock::time_point{};
}

}  // namespace kcm::client
