// libFuzzer target for Go durations (ParseDuration, FormatDuration). The input is a duration's
// text. Checked: it parses or fails with reason InvalidDuration; a parsed duration, formatted
// (Go's time.Duration.String form) and parsed again, is the same number of nanoseconds; and any
// int64 (the input's first 8 bytes) formats to text that parses back to it, the whole range
// from math.MinInt64 to math.MaxInt64 included.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "pkg/util/duration.h"

namespace {

using kcm::fuzz::Check;

void CheckRoundTrip(std::chrono::nanoseconds d) {
  const std::string text = kcm::FormatDuration(d);
  auto again = kcm::ParseDuration(text);
  Check(again.ok() && *again == d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto d = kcm::ParseDuration(text);
  if (d.ok()) {
    CheckRoundTrip(*d);
  } else {
    Check(d.error().reason == "InvalidDuration");
  }
  if (size >= 8) {
    int64_t n = 0;
    std::memcpy(&n, data, 8);
    CheckRoundTrip(std::chrono::nanoseconds(n));
  }
  return 0;
}
