#include "pkg/client/frame_scanner.h"

#include "pkg/client/json_frame_scanner.h"
#include "pkg/client/length_frame_scanner.h"
#include "pkg/client/rest_client.h"

namespace kcm::client {

std::unique_ptr<FrameScanner> NewFrameScanner(std::string_view content_type,
                                              std::size_t max_frame_bytes) {
  if (IsProtobufContentType(content_type)) {
    return std::make_unique<LengthFrameScanner>(max_frame_bytes);
  }
  return std::make_unique<JsonFrameScanner>(max_frame_bytes);
}

}  // namespace kcm::client
