// ListerWatcher: the seam between the Reflector and the API server. The production adapter wraps
// the REST client and the api decoders; tests script it. Implementations must be safe to call from
// the reflector thread while WatchInterface::Stop is called from another.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "pkg/api/list_options.h"
#include "pkg/api/watch_event.h"
#include "pkg/util/result.h"

namespace kcm::cache {

// One open WATCH stream.
class WatchInterface {
 public:
  virtual ~WatchInterface() = default;
  // Blocks for the next event. nullopt: the stream closed cleanly (server timeout, Stop()).
  // An error: the stream broke (decode failure, connection reset). An ERROR frame is returned as an
  // event of type kError, not as an error.
  virtual Result<std::optional<api::WatchEvent>> Next() = 0;
  // Events already received that Next() returns without waiting for the connection (the rest of
  // the last read); 0 when none or unknown. Same thread as Next().
  virtual std::size_t buffered_events() const { return 0; }
  // Ends the stream; a blocked Next() returns promptly. Callable from any thread, more than once.
  virtual void Stop() = 0;
};

// Called with each listed item; returns the object the list keeps (ReflectorStore::ReuseUnchanged),
// or null when it took the item. Called with null when a new answer begins (api::ListItemFunc).
using ListItemFunc = std::function<api::ObjectPtr(api::ObjectPtr)>;

class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  // One LIST page (options.limit / options.continue_token select the page).
  virtual Result<api::ObjectList> List(const api::ListOptions& options) = 0;
  // The same, each item passed through on_item. An adapter that decodes a list while it arrives
  // calls it per item as decoded, so a replaced item is dropped before the next one exists; this
  // default applies it afterwards.
  virtual Result<api::ObjectList> List(const api::ListOptions& options,
                                       const ListItemFunc& on_item) {
    Result<api::ObjectList> list = List(options);
    if (list.ok() && on_item) {
      std::vector<api::ObjectPtr> kept;
      for (api::ObjectPtr& item : list->items) {
        if (api::ObjectPtr obj = on_item(std::move(item))) kept.push_back(std::move(obj));
      }
      list->items = std::move(kept);
    }
    return list;
  }
  virtual Result<std::unique_ptr<WatchInterface>> Watch(const api::ListOptions& options) = 0;
};

}  // namespace kcm::cache
