// JsonFrameScanner: the FrameScanner for JSON watch streams: complete top-level JSON objects
// (behaviour 1.8: values newline-separated or back to back). It tracks nesting and strings only;
// it does not validate the JSON. Frames are padded (see json_padding.h); a stream holding something
// other than an object at the top level ends with code 500 ClientWatchDecoding. Thread-compatible.
#pragma once

#include <cstddef>
#include <string_view>

#include "pkg/client/frame_scanner.h"

namespace kcm::client {

class JsonFrameScanner final : public FrameScanner {
 public:
  // max_frame_bytes 0 = unlimited.
  explicit JsonFrameScanner(std::size_t max_frame_bytes = 0) : FrameScanner(max_frame_bytes) {}

  void Feed(std::string_view data) override;
  bool HasPartial() const override { return depth_ > 0 || !partial_.empty(); }

 private:
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace kcm::client
