#include "pkg/util/duration.h"

#include <cmath>
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

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

Result<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return BadDuration(text, "empty");
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    while (i < s.size() && IsDigit(s[i])) ++i;
    size_t int_end = i;
    size_t frac_end = i;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
      frac_end = i;
    }
    if (int_end == 0 && frac_end <= 1) return BadDuration(text, "expected a number");
    long double number = 0;
    for (size_t k = 0; k < int_end; ++k) number = number * 10 + (s[k] - '0');
    long double scale = 0.1L;
    for (size_t k = int_end + 1; k < frac_end; ++k, scale /= 10) number += (s[k] - '0') * scale;
    size_t unit_start = i;
    while (i < s.size() && !IsDigit(s[i]) && s[i] != '.') ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    if (unit.empty()) return BadDuration(text, "missing unit");
    int64_t nanos = UnitNanos(unit);
    if (nanos == 0) return BadDuration(text, "unknown unit \"" + std::string(unit) + "\"");
    total += number * nanos;
    if (total > static_cast<long double>(std::numeric_limits<int64_t>::max())) {
      return BadDuration(text, "out of range");
    }
    s.remove_prefix(i);
  }
  auto ns = static_cast<int64_t>(std::llround(total));
  return std::chrono::nanoseconds(negative ? -ns : ns);
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
