// LengthFrameScanner: splits a byte stream into length-prefixed frames (the protobuf watch wire
// format: a 4-byte big-endian length, then that many bytes; upstream's LengthDelimitedFramer),
// split across reads at any byte. A frame over the scanner's limit is an error (cause kTooLarge)
// and is never buffered: the scanner holds at most the unfinished frame (≤ limit) plus the
// complete frames of the last Feed. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/client/frame_queue.h"
#include "pkg/util/result.h"

namespace kcm::client {

class LengthFrameScanner {
 public:
  // max_frame_bytes 0 = unlimited.
  explicit LengthFrameScanner(std::size_t max_frame_bytes = 0) : max_frame_(max_frame_bytes) {}

  // Consumes received bytes. After an error the rest of the stream is ignored.
  void Feed(std::string_view data);
  // The next complete frame without its length prefix, nullopt if more bytes are needed, or an
  // error for a frame over the limit (kTooLarge).
  Result<std::optional<std::string>> Next() { return frames_.Next(); }
  // True when bytes of an unfinished frame are buffered (a stream ending now is truncated).
  bool HasPartial() const { return !partial_.empty(); }
  std::size_t partial_bytes() const { return partial_.size(); }
  // Complete frames found and not yet returned by Next().
  std::size_t ready_frames() const { return frames_.size(); }

 private:
  // Sets the kTooLarge error (and drops the unfinished frame) when n is over the limit.
  bool OverLimit(std::uint32_t n);

  std::size_t max_frame_;
  std::string partial_;  // the unfinished frame's bytes so far, its prefix included
  FrameQueue frames_;    // complete frames, not yet returned, then the error
};

}  // namespace kcm::client
