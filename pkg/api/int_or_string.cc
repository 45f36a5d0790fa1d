#include "pkg/api/int_or_string.h"

#include <charconv>
#include <cmath>

#include "pkg/api/json.h"

namespace kcm::api {

std::string IntOrString::ToJson() const {
  if (type == Type::kInt) return std::to_string(int_val);
  std::string out;
  json::AppendQuoted(str_val.view(), &out);
  return out;
}

Result<int> GetScaledValueFromIntOrPercent(const IntOrString* v, int total, bool round_up) {
  if (v == nullptr) return Error::Local("InvalidArgument", "nil value for IntOrString");
  if (v->type == IntOrString::Type::kInt) return static_cast<int>(v->int_val);
  std::string_view s = v->str_val.view();
  if (s.empty() || s.back() != '%') {
    return Error::Local("InvalidArgument",
                        "invalid type: string is not a percentage: \"" + v->str_val.str() + "\"");
  }
  s.remove_suffix(1);
  int pct = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), pct);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    return Error::Local("InvalidArgument",
                        "invalid value \"" + v->str_val.str() + "\": not an integer percentage");
  }
  // Same arithmetic as upstream (float64 product, then ceil/floor), so edge cases round alike.
  double scaled = static_cast<double>(pct) * static_cast<double>(total) / 100.0;
  return static_cast<int>(round_up ? std::ceil(scaled) : std::floor(scaled));
}

}  // namespace kcm::api
