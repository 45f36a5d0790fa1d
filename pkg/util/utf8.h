// UTF-8 as Go reads it (unicode/utf8.DecodeRune): what is a well-formed sequence, for the writers
// that must not pass on bytes that are not text — the log's escaping (klog.cc) and JSON strings
// (pkg/api/json.cc), which Go's encoding/json coerces to valid UTF-8. Pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace kcm::utf8 {

// The length of the well-formed UTF-8 sequence at the start of `s` (1 to 4) and its code point in
// *cp; 0 when it is not one: a stray continuation byte, an overlong form, a surrogate, a code
// point past U+10FFFF, a sequence cut short, or `s` empty.
std::size_t SequenceLength(std::string_view s, char32_t* cp);

// U+FFFD, what Go writes for a byte that is not UTF-8.
inline constexpr std::string_view kReplacement = "\xef\xbf\xbd";

}  // namespace kcm::utf8
