// WatchEvent and ObjectList: what a decoded WATCH frame and a decoded LIST page are. Produced by
// the pkg/api decoders, consumed by the Reflector. Plain data; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::api {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object for Added/Modified/Deleted (and the bookmark's object, if decoded).
  ObjectPtr object;
  // metadata.resourceVersion of the object; for a BOOKMARK the only field that matters.
  std::string resource_version;
  // BOOKMARK annotated `k8s.io/initial-events-end: "true"` (streaming list, behaviour 2.7).
  bool initial_events_end = false;
  // For ERROR: the decoded Status (code, reason, message, causes).
  Error error;
};

// One LIST response page.
struct ObjectList {
  std::vector<ObjectPtr> items;
  std::string resource_version;       // metadata.resourceVersion of the list
  std::string continue_token;         // metadata.continue ("" on the last page)
  int64_t remaining_item_count = -1;  // metadata.remainingItemCount, -1 when absent
  // metadata.shardInfo.selector: the shard selector the server applied ("" when it applied none,
  // e.g. a server without the ShardedListAndWatch gate, which ignores shardSelector).
  std::string shard_selector;
};

}  // namespace kcm::api
