// LengthFrameScanner: splits a byte stream into length-prefixed frames (the protobuf watch wire
// format: a 4-byte big-endian length, then that many bytes; upstream's LengthDelimitedFramer),
// split across reads at any byte. A frame over the scanner's limit is an error (cause kTooLarge)
// and is never buffered. Thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

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
  Result<std::optional<std::string>> Next();
  // True when bytes of an unfinished frame are buffered (a stream ending now is truncated).
  bool HasPartial() const { return buffer_.size() > pos_; }
  std::size_t partial_bytes() const { return buffer_.size() - pos_; }

 private:
  std::size_t max_frame_;
  std::string buffer_;  // received bytes; those before pos_ are consumed
  std::size_t pos_ = 0;
  std::optional<Error> error_;
};

}  // namespace kcm::client
