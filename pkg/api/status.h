// metav1.Status → kcm::Error: how API errors (HTTP error bodies and watch ERROR events) are read
// (behaviour 1.7). Stateless; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::api {

// Decodes a Status body into {code, reason, message, details.causes[].reason}. nullopt when the
// body is not a JSON object with kind "Status" (e.g. an HTML error page), so the caller can
// fall back to the HTTP status line.
std::optional<Error> DecodeStatus(std::string_view body);

}  // namespace kcm::api
