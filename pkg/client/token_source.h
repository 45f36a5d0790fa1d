// Bearer token supply for the transport (client-go transport's token sources): the token the
// RestClient puts in each request's Authorization header, and Invalidate() after a 401 (upstream's
// ResettableTokenSource). Implementations are thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::client {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // "" means no Authorization header.
  virtual Result<std::string> Token() = 0;
  // Forget the cached token so the next Token() fetches a new one (after a 401).
  virtual void Invalidate() = 0;
  // Whether a Token() after Invalidate() may differ: a request refused with 401 is then resent
  // once at once with the new token (a rotated projected token, an expired TokenRequest token).
  virtual bool Refreshable() const = 0;
};

// A static token, or a token file re-read at most once a minute
// (transport.NewCachedFileTokenSource).
class CachedFileTokenSource final : public TokenSource {
 public:
  static constexpr std::chrono::minutes kFileCachePeriod{1};

  // file empty: always `static_token`. Otherwise the file's trimmed content; `static_token` is the
  // fallback when the file cannot be read.
  CachedFileTokenSource(std::string static_token, std::string file, Clock& clock);

  Result<std::string> Token() override;
  void Invalidate() override;
  bool Refreshable() const override { return !file_.empty(); }

 private:
  const std::string static_token_;
  const std::string file_;
  Clock& clock_;
  std::mutex mu_;
  std::string cached_;
  Clock::time_point expires_{};
  bool valid_ = false;
};

}  // namespace kcm::client
