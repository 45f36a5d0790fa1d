// Byte-level skipping over JSON text known to be well formed (simdjson accepted it when it was
// decoded): the scanners of strip_managed_fields.cc and raw_json.cc. Past-the-end results are
// clamped to the text's size.
#pragma once

#include <cstddef>
#include <string_view>

namespace kcm::api::internal {

inline bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

inline size_t SkipJsonSpace(std::string_view s, size_t i) {
  while (i < s.size() && IsJsonSpace(s[i])) ++i;
  return i;
}

// The index just past the string whose opening quote is at `i`.
inline size_t SkipJsonString(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return s.size();
}

// The index just past the JSON value starting at `i` (a string, a container or a scalar).
inline size_t SkipJsonValue(std::string_view s, size_t i) {
  if (i >= s.size()) return s.size();
  if (s[i] == '"') return SkipJsonString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        i = SkipJsonString(s, i) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && !IsJsonSpace(s[i])) ++i;
  return i;
}

}  // namespace kcm::api::internal
