// IntOrString (k8s.io/apimachinery/pkg/util/intstr) and the percentage scaling the Deployment
// rolling update uses for maxSurge/maxUnavailable. Plain value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/api/shared_meta.h"
#include "pkg/util/result.h"

namespace kcm::api {

// 16 bytes (was 40): the string form is a SharedString, which the Deployment decoder interns
// (every Deployment's "25%" points at one string). Each cached Deployment holds two, in
// spec.strategy.rollingUpdate.
struct IntOrString {
  enum class Type : uint8_t { kInt, kString };
  Type type = Type::kInt;
  int32_t int_val = 0;
  SharedString str_val;

  static IntOrString FromInt(int32_t v) { return IntOrString{Type::kInt, v, {}}; }
  static IntOrString FromString(SharedString s) {
    return IntOrString{Type::kString, 0, std::move(s)};
  }
  // The JSON form: a bare number or a quoted string.
  std::string ToJson() const;
  friend bool operator==(const IntOrString&, const IntOrString&) = default;
};

// GetScaledValueFromIntOrPercent: an int is returned as is; "N%" is N percent of `total`, rounded
// up (maxSurge) or down (maxUnavailable). Errors ("Invalid"): nullptr, a string without '%', or a
// non-integer percentage.
Result<int> GetScaledValueFromIntOrPercent(const IntOrString* v, int total, bool round_up);

}  // namespace kcm::api
