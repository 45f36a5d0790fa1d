// Response bodies and watch frames are std::strings whose capacity() is at least
// size() + kJsonPadding, so a simdjson parser can read them in place (padded_string_view over
// data/size/capacity) without copying. Constant only; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kcm::client {

// Equal to simdjson::SIMDJSON_PADDING (checked by a static_assert in a .cc that sees simdjson).
inline constexpr std::size_t kJsonPadding = 64;

// A copy of `text` with the padding reserved.
inline std::string PaddedCopy(std::string_view text) {
  std::string out;
  out.reserve(text.size() + kJsonPadding);
  out.append(text);
  return out;
}

// Ensures the padding on an existing string (reallocates at most once).
inline void EnsurePadding(std::string& s) {
  if (s.capacity() < s.size() + kJsonPadding) s.reserve(s.size() + kJsonPadding);
}

}  // namespace kcm::client
