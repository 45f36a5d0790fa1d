// JsonFrameScanner: splits a byte stream into complete top-level JSON objects (the watch wire
// format, behaviour 1.8: values newline-separated or back to back, split across reads at any byte).
// It tracks nesting and strings only; it does not validate the JSON. A frame longer than the
// scanner's limit is an error (cause kTooLarge) and is never buffered past the limit: the scanner
// holds at most the unfinished frame (≤ limit) plus the complete frames of the last Feed.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/client/frame_queue.h"
#include "pkg/util/result.h"

namespace kcm::client {

class JsonFrameScanner {
 public:
  // max_frame_bytes 0 = unlimited.
  explicit JsonFrameScanner(std::size_t max_frame_bytes = 0) : max_frame_(max_frame_bytes) {}

  // Consumes received bytes. After an error the rest of the stream is ignored.
  void Feed(std::string_view data);
  // The next complete frame (padded, see json_padding.h), nullopt if more bytes are needed, or
  // an error (after the frames that preceded it) when the stream holds something other than an
  // object at the top level (code 500 ClientWatchDecoding) or a frame over the limit (kTooLarge).
  Result<std::optional<std::string>> Next() { return frames_.Next(); }
  // True when bytes of an unfinished frame are buffered (a stream ending now is truncated).
  bool HasPartial() const;
  // Bytes of the unfinished frame held; never more than the limit.
  std::size_t partial_bytes() const { return partial_.size(); }
  // Complete frames found and not yet returned by Next().
  std::size_t ready_frames() const { return frames_.size(); }

 private:
  Error TooLarge() const;

  std::size_t max_frame_;
  std::string partial_;  // the unfinished frame's bytes so far
  FrameQueue frames_;    // complete frames, padded, not yet returned, then the error
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace kcm::client
