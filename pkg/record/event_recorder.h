// EventRecorder: what a controller calls to record a core/v1 Event about an object (client-go's
// record.EventRecorder). Implementations never block the caller and are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/event.h"

namespace kcm::record {

// core/v1 event types; any other type is refused (logged and dropped), as upstream.
inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

using ObjectReference = api::ObjectReference;

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;

  // Records `message` about `object`. `type` is kEventTypeNormal or kEventTypeWarning; `reason` is
  // a short UpperCamelCase machine-readable word ("ScalingReplicaSet").
  virtual void Event(const ObjectReference& object, std::string_view type, std::string_view reason,
                     std::string_view message) = 0;

  // Event with a printf-style message (checked by the compiler).
  void Eventf(const ObjectReference& object, std::string_view type, std::string_view reason,
              const char* format, ...) __attribute__((format(printf, 5, 6)));
};

}  // namespace kcm::record
