#include "pkg/api/time.h"

#include <chrono>
#include <cstdio>
#include <limits>

namespace kcm::api {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

Error BadTime(std::string_view s, const char* why) {
  return Error::Local("DecodeError",
                      "invalid RFC 3339 time \"" + std::string(s) + "\": " + std::string(why));
}

std::string Format(Time t, bool micro) {
  using namespace std::chrono;
  auto us = floor<microseconds>(t);
  auto day = floor<days>(us);
  year_month_day ymd{day};
  hh_mm_ss hms{floor<seconds>(us - day)};
  char buf[48];
  int n =
      std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                    static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                    static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                    static_cast<int>(hms.seconds().count()));
  std::string out(buf, static_cast<size_t>(n));
  if (micro) {
    auto frac = (us - floor<seconds>(us)).count();
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  out += 'Z';
  return out;
}

}  // namespace

Result<Time> ParseRFC3339(std::string_view s) {
  using namespace std::chrono;
  int y, mo, d, h, mi, sec;
  if (!Digits(s, 0, 4, &y) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return BadTime(s, "expected YYYY-MM-DDTHH:MM:SS");
  }
  if (h > 23 || mi > 59 || sec > 59) return BadTime(s, "clock value out of range");
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return BadTime(s, "date out of range");
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t scale = 100000000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      nanos += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return BadTime(s, "empty fraction");
  }
  int offset_minutes = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return BadTime(s, "bad zone offset");
    }
    offset_minutes = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return BadTime(s, "missing zone");
  }
  if (pos != s.size()) return BadTime(s, "trailing characters");
  auto tp = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} - minutes{offset_minutes};
  // Time counts nanoseconds in 64 bits (years 1678..2261); saturate outside that range (e.g.
  // Go's zero time 0001-01-01) rather than overflow, keeping the order of timestamps. The low
  // end is kMinTime, not Time::min(), which OptionalTime keeps for "absent".
  int64_t secs = tp.time_since_epoch().count();
  constexpr int64_t kMaxSecs = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (secs < -kMaxSecs) return kMinTime;
  if (secs > kMaxSecs) return Time::max();
  return Time{duration_cast<Time::duration>(seconds{secs} + nanoseconds{nanos})};
}

std::string FormatTime(Time t) {
  return Format(t, false);
}

std::string FormatMicroTime(Time t) {
  return Format(t, true);
}

}  // namespace kcm::api
