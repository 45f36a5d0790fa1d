// metav1.Time and metav1.MicroTime wire forms: RFC 3339 parsing (with or without fractional
// seconds, `Z` or a numeric offset) and formatting in UTC. Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/object_meta.h"
#include "pkg/util/result.h"

namespace kcm::api {

// Parses "2006-01-02T15:04:05Z", "2006-01-02T15:04:05.999999999+07:00", ... (lower-case t/z are
// accepted, like Go). Up to nanosecond precision; extra fraction digits are truncated. Times
// outside Time's range (years 1678..2261) saturate to kMinTime / Time::max() (kMinTime, not
// Time::min(): that is OptionalTime's "absent", optional_time.h).
// Errors: reason "DecodeError".
Result<Time> ParseRFC3339(std::string_view s);

// metav1.Time: whole seconds in UTC, "2006-01-02T15:04:05Z" (the fraction is truncated, as the
// API server stores it).
std::string FormatTime(Time t);
// metav1.MicroTime: "2006-01-02T15:04:05.000000Z", always six fraction digits, UTC.
std::string FormatMicroTime(Time t);

}  // namespace kcm::api
