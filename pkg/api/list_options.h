// ListOptions: the query parameters of LIST and WATCH requests (metav1.ListOptions). Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kcm::api {

struct ListOptions {
  std::string label_selector;              // labelSelector, query-string form ("a=b,c in (d)")
  std::string field_selector;              // fieldSelector
  std::string resource_version;            // resourceVersion ("" = most recent, "0" = any)
  std::string resource_version_match;      // resourceVersionMatch: "", "NotOlderThan", "Exact"
  int64_t limit = 0;                       // limit (0 = unpaginated)
  std::string continue_token;              // continue
  bool allow_watch_bookmarks = false;      // allowWatchBookmarks (watch only)
  std::optional<int64_t> timeout_seconds;  // timeoutSeconds
  bool send_initial_events = false;        // sendInitialEvents (streaming list, watch only)
  std::string shard_selector;  // shardSelector, the wire form of api::ShardSelector ("" = none)
};

}  // namespace kcm::api
