// LengthFrameScanner: the FrameScanner for protobuf watch streams: length-prefixed frames (a
// 4-byte big-endian length, then that many bytes; upstream's LengthDelimitedFramer), returned
// without their prefix. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pkg/client/frame_scanner.h"

namespace kcm::client {

class LengthFrameScanner final : public FrameScanner {
 public:
  // max_frame_bytes 0 = unlimited.
  explicit LengthFrameScanner(std::size_t max_frame_bytes = 0) : FrameScanner(max_frame_bytes) {}

  void Feed(std::string_view data) override;
  bool HasPartial() const override { return !partial_.empty(); }

 private:
  // Sets the kTooLarge error (and drops the unfinished frame, its prefix included) when n is
  // over the limit.
  bool OverLimit(std::uint32_t n);
};

}  // namespace kcm::client
