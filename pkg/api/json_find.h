// Reading one field of a large JSON answer without building a document.
// Stateless; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/json.h"

namespace kcm::api::json {

// The string at `path` in the JSON object `text` (e.g. a created pod's name and
// resourceVersion). nullopt when it is absent, not a string, has escapes, or the text cannot be
// read unambiguously (internal/raw_json.h) — callers that need an answer then Parse.
std::optional<std::string> FindPlainString(std::string_view text, Path path);

}  // namespace kcm::api::json
