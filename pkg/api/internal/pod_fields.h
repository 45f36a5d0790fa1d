// Private to pkg/api .cc files: the string-to-field conversions the JSON and protobuf pod decoders
// share, so both fill the pruned record identically. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pkg/api/pod.h"

namespace kcm::api::internal {

// status.phase; unknown values read as kUnset.
PodPhase ParsePhase(std::string_view p);
// A condition's status; unknown values read as kUnset.
ConditionStatus ParseConditionStatus(std::string_view s);
// strconv.ParseInt(s, 10, 32) semantics: optional sign, decimal digits, int32 range.
std::optional<int32_t> ParseInt32(std::string_view s);

}  // namespace kcm::api::internal
