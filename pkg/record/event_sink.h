// EventSink: where the broadcaster writes events (client-go's record.EventSink). Implementations
// must be thread-safe; the broadcaster calls one sink from its single worker thread. A stop
// request cancels a write under way (the broadcaster's Shutdown).
#pragma once

#include <stop_token>
#include <string_view>

#include "pkg/api/event.h"
#include "pkg/util/result.h"

namespace kcm::record {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // POST into event.metadata.namespace_; returns the server's copy.
  virtual Result<api::Event> Create(const api::Event& event, std::stop_token stop) = 0;
  // PUT (event.metadata.resourceVersion is the precondition).
  virtual Result<api::Event> Update(const api::Event& event, std::stop_token stop) = 0;
  // Strategic merge patch of the Event named event.metadata.name.
  virtual Result<api::Event> Patch(const api::Event& event, std::string_view patch,
                                   std::stop_token stop) = 0;
};

}  // namespace kcm::record
