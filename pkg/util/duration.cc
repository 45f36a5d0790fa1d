#include "pkg/util/duration.h"

#include <cstdint>
#include <limits>

namespace kcm {
namespace {

Error BadDuration(std::string_view text, std::string_view why) {
  return Error::Local("InvalidDuration",
                      "invalid duration \"" + std::string(text) + "\": " + std::string(why));
}

// Nanoseconds per unit, or 0 for an unknown unit.
int64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1000;
  if (unit == "ms") return 1000 * 1000;
  if (unit == "s") return 1000LL * 1000 * 1000;
  if (unit == "m") return 60LL * 1000 * 1000 * 1000;
  if (unit == "h") return 3600LL * 1000 * 1000 * 1000;
  return 0;
}

// GCC and clang's 128-bit integer (__extension__: not ISO C++), for one exact product below.
__extension__ using Uint128 = unsigned __int128;

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

// Integer arithmetic throughout, as Go's time.ParseDuration: the magnitude is summed in a uint64
// that may reach 2^63, so "-2562047h47m16.854775808s" (math.MinInt64, what FormatDuration prints
// for it) parses, and a fraction is cut to whole nanoseconds, never rounded up.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;  // |math.MinInt64|
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return BadDuration(text, "empty");
  uint64_t total = 0;
  while (!s.empty()) {
    size_t i = 0;
    uint64_t whole = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      const auto digit = static_cast<uint64_t>(s[i] - '0');
      if (whole > (kMaxMagnitude - digit) / 10) return BadDuration(text, "out of range");
      whole = whole * 10 + digit;
    }
    const bool has_whole = i > 0;
    // The fraction as digits/scale; digits past 18 cannot add a nanosecond and are dropped.
    uint64_t digits = 0, scale = 1;
    bool has_fraction = false;
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && IsDigit(s[i]); ++i) {
        has_fraction = true;
        if (scale < 1000000000000000000ULL) {
          digits = digits * 10 + static_cast<uint64_t>(s[i] - '0');
          scale *= 10;
        }
      }
    }
    if (!has_whole && !has_fraction) return BadDuration(text, "expected a number");
    const size_t unit_start = i;
    while (i < s.size() && !IsDigit(s[i]) && s[i] != '.') ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    if (unit.empty()) return BadDuration(text, "missing unit");
    const auto nanos = static_cast<uint64_t>(UnitNanos(unit));
    if (nanos == 0) return BadDuration(text, "unknown unit \"" + std::string(unit) + "\"");
    if (whole > kMaxMagnitude / nanos) return BadDuration(text, "out of range");
    uint64_t value = whole * nanos;
    // digits < scale, so this is below nanos ≤ 3.6e12 and the product fits in 128 bits.
    value += static_cast<uint64_t>(static_cast<Uint128>(digits) * nanos / scale);
    if (value > kMaxMagnitude || total > kMaxMagnitude - value) {
      return BadDuration(text, "out of range");
    }
    total += value;
    s.remove_prefix(i);
  }
  if (negative) return std::chrono::nanoseconds(static_cast<int64_t>(-total));
  if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return BadDuration(text, "out of range");
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(total));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  std::string sign = ns < 0 ? "-" : "";
  uint64_t u = ns < 0 ? -static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  auto with_fraction = [](uint64_t value, uint64_t unit, int digits) {
    std::string out = std::to_string(value / unit);
    uint64_t frac = value % unit;
    if (frac != 0) {
      std::string f = std::to_string(frac);
      f.insert(0, static_cast<size_t>(digits) - f.size(), '0');
      while (!f.empty() && f.back() == '0') f.pop_back();
      out += "." + f;
    }
    return out;
  };
  if (u < 1000) return sign + std::to_string(u) + "ns";
  if (u < 1000000) return sign + with_fraction(u, 1000, 3) + "\xC2\xB5s";
  if (u < 1000000000) return sign + with_fraction(u, 1000000, 6) + "ms";
  uint64_t total_seconds = u / 1000000000;
  uint64_t sub = u % 1000000000;
  uint64_t hours = total_seconds / 3600;
  uint64_t minutes = (total_seconds / 60) % 60;
  uint64_t seconds = total_seconds % 60;
  std::string secs = with_fraction(seconds * 1000000000 + sub, 1000000000, 9) + "s";
  if (hours > 0) return sign + std::to_string(hours) + "h" + std::to_string(minutes) + "m" + secs;
  if (minutes > 0) return sign + std::to_string(minutes) + "m" + secs;
  return sign + secs;
}

}  // namespace kcm
