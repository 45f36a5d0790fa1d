// ASCII string helpers shared by the parsers of headers, flags and files: trimming and case
// folding. ASCII only (HTTP names, flag values and tokens are ASCII), with no locale lookup per
// byte as std::tolower makes. Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>

namespace kcm {

// The bytes of `chars` removed from both ends of s; a view into s.
constexpr std::string_view Trim(std::string_view s, std::string_view chars = " \t") {
  const std::size_t begin = s.find_first_not_of(chars);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(chars) - begin + 1);
}

constexpr char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// s with A-Z folded to a-z.
inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

// ASCII case-insensitive equality (strings.EqualFold for ASCII).
constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

}  // namespace kcm
