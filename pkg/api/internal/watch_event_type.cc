#include "pkg/api/internal/watch_event_type.h"

#include <string>

#include "pkg/api/internal/decode_error.h"

namespace kcm::api::internal {

Result<WatchEventType> ParseWatchEventType(std::string_view type) {
  if (type == "ADDED") return WatchEventType::kAdded;
  if (type == "MODIFIED") return WatchEventType::kModified;
  if (type == "DELETED") return WatchEventType::kDeleted;
  if (type == "BOOKMARK") return WatchEventType::kBookmark;
  if (type == "ERROR") return WatchEventType::kError;
  return DecodeErrorAt("type", "unknown watch event type \"" + std::string(type) + "\"");
}

}  // namespace kcm::api::internal
