// Bearer token supply for the transport (transport.NewCachedFileTokenSource, spec 1.3): a static
// token, or a token file re-read at most once a minute, with Invalidate() after a 401.
// Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::client {

class TokenSource {
 public:
  static constexpr std::chrono::minutes kFileCachePeriod{1};

  // file empty: always `static_token`. Otherwise the file's trimmed content; `static_token` is the
  // fallback when the file cannot be read.
  TokenSource(std::string static_token, std::string file, Clock& clock);

  // "" means no Authorization header.
  Result<std::string> Token();
  // Forget the cached file token so the next Token() re-reads the file (after a 401).
  void Invalidate();
  bool file_backed() const { return !file_.empty(); }

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
