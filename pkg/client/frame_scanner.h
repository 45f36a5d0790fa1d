// FrameScanner: splits the byte stream of one WATCH response into frames, fed in chunks as they
// are read and split across reads at any byte (upstream's framer.Framer). JsonFrameScanner and
// LengthFrameScanner implement it; NewFrameScanner picks one for the response's content type.
// The scanner holds at most the unfinished frame (≤ limit) plus the complete frames of the last
// Feed; a frame over the limit is an error (cause kTooLarge). Thread-compatible.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/client/frame_queue.h"
#include "pkg/util/result.h"

namespace kcm::client {

class FrameScanner {
 public:
  virtual ~FrameScanner() = default;
  FrameScanner(const FrameScanner&) = delete;
  FrameScanner& operator=(const FrameScanner&) = delete;

  // Consumes received bytes (one call per read: the per-byte work stays inside the
  // implementation). After an error the rest of the stream is ignored.
  virtual void Feed(std::string_view data) = 0;
  // True when bytes of an unfinished frame are buffered (a stream ending now is truncated).
  virtual bool HasPartial() const = 0;

  // The next complete frame, nullopt if more bytes are needed, or the error that ended the
  // stream (after the frames that preceded it).
  Result<std::optional<std::string>> Next() { return frames_.Next(); }
  // Bytes of the unfinished frame held; never more than the limit.
  std::size_t partial_bytes() const { return partial_.size(); }
  // Complete frames found and not yet returned by Next().
  std::size_t ready_frames() const { return frames_.size(); }

 protected:
  // max_frame_bytes 0 = unlimited.
  explicit FrameScanner(std::size_t max_frame_bytes) : max_frame_(max_frame_bytes) {}

  // Ends the stream with the kTooLarge error and drops the unfinished frame.
  void FailTooLarge() {
    frames_.Fail(Error::Transport(
        TransportCause::kTooLarge,
        "watch event over the " + std::to_string(max_frame_) + "-byte frame limit"));
    std::string().swap(partial_);
  }

  const std::size_t max_frame_;
  std::string partial_;  // the unfinished frame's bytes so far
  FrameQueue frames_;    // complete frames, not yet returned, then the error
};

// The scanner for a watch response of this Content-Type: length-prefixed frames for
// application/vnd.kubernetes.protobuf, JSON objects otherwise.
std::unique_ptr<FrameScanner> NewFrameScanner(std::string_view content_type,
                                              std::size_t max_frame_bytes);

}  // namespace kcm::client
