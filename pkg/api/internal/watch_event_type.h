// Private to pkg/api .cc files: a watch frame's "type" as both wire formats spell it (the JSON
// frame's `type` member and the protobuf WatchEvent's field 1 carry the same names).
#pragma once

#include <string_view>

#include "pkg/api/watch_event.h"
#include "pkg/util/result.h"

namespace kcm::api::internal {

// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR; anything else is a DecodeError at "type".
Result<WatchEventType> ParseWatchEventType(std::string_view type);

}  // namespace kcm::api::internal
