#include "pkg/record/event_recorder.h"

#include <cstdarg>
#include <cstdio>

namespace kcm::record {

void EventRecorder::Eventf(const ObjectReference& object, std::string_view type,
                           std::string_view reason, const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list sizing;
  va_copy(sizing, args);
  const int n = std::vsnprintf(nullptr, 0, format, sizing);
  va_end(sizing);
  std::string message;
  if (n > 0) {
    message.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(message.data(), message.size(), format, args);
    message.resize(static_cast<size_t>(n));
  }
  va_end(args);
  Event(object, type, reason, message);
}

}  // namespace kcm::record
