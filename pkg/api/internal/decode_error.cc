#include "pkg/api/internal/decode_error.h"

#include <utility>

namespace kcm::api::internal {

Error DecodeErrorAt(std::string_view path, std::string_view what) {
  std::string msg;
  if (!path.empty()) {
    msg.append(path);
    msg.append(": ");
  }
  msg.append(what);
  return Error::Local(kDecodeError, std::move(msg));
}

Error PrefixErrorPath(Error e, std::string_view prefix) {
  const size_t colon = e.message.find(": ");
  const bool has_path = colon != std::string::npos && e.message.find(' ') > colon;
  e.message = std::string(prefix) + (has_path ? "." : ": ") + e.message;
  return e;
}

std::string ListItemPath(size_t i) {
  return "items[" + std::to_string(i) + "]";
}

}  // namespace kcm::api::internal
