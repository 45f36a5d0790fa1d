// Go-style durations ("1h30m", "500ms", "12h0m0s", "1.5s"), as upstream flags spell them.
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm {

// Parses a Go duration: an optional sign, then one or more decimal numbers each with a unit
// (ns, us, µs, ms, s, m, h). "0" alone is allowed. Errors name the input.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// Formats like Go's time.Duration.String(): "12h0m0s", "1.5s", "500ms", "0s".
std::string FormatDuration(std::chrono::nanoseconds d);

}  // namespace kcm
