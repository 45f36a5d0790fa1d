// WatchStream: the frames of one WATCH response (watch.Interface over the raw wire format,
// behaviour 1.8). One thread calls Next(); Stop() may be called from any thread and makes a blocked
// Next() return promptly. The stream must outlive concurrent Stop() callers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pkg/client/frame_scanner.h"
#include "pkg/util/result.h"

namespace kcm::client {

class HttpStream;

class WatchStream {
 public:
  // on_status is told the HTTP status once it is known (for metrics); may be empty.
  // max_frame_bytes bounds one frame (0 = unlimited).
  WatchStream(std::unique_ptr<HttpStream> stream, std::function<void(int status)> on_status,
              std::size_t max_frame_bytes = 0);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // The next frame: the raw `{"type":...,"object":...}` text (padded, see json_padding.h; ERROR
  // events pass through as frames), or, when the server answered protobuf (protobuf()), one
  // WatchEvent message without its length prefix. nullopt: the server closed the stream cleanly or
  // Stop() was called. Errors: a non-2xx answer to the watch request (decoded Status, e.g. 410
  // Expired), a transport failure between frames (code 0 with its TransportCause: the stream broke
  // or hit its deadline, no event was lost), a frame over the limit (cause kTooLarge), or a
  // truncated/undecodable stream (code 500, reason ClientWatchDecoding: an event was lost).
  // After an error or nullopt every later call returns nullopt.
  Result<std::optional<std::string>> Next();

  // Cancels the transfer; thread-safe and idempotent.
  void Stop();

  // True when the server answered application/vnd.kubernetes.protobuf (length-prefixed frames);
  // known once Next() returned a frame.
  bool protobuf() const { return protobuf_; }

  // Complete frames already received and not yet returned: while it is above zero, Next() returns
  // one without reading from the connection, so it cannot block. A consumer that hands events on
  // to another thread can hold that thread's wake-up until the frames of one read are all out
  // (the Reflector's batch into its DeltaFIFO). Same thread as Next().
  std::size_t buffered_frames() const { return scanner_->ready_frames(); }

 private:
  std::unique_ptr<HttpStream> stream_;
  std::function<void(int)> on_status_;
  const std::size_t max_frame_bytes_;
  // JSON until the response's Content-Type is known, then the one NewFrameScanner picks for it.
  std::unique_ptr<FrameScanner> scanner_;
  std::string read_buffer_;  // the bytes of one HttpStream::Read, handed to a scanner

 public:
  // For tests: the scanner's unfinished-frame buffer.
  std::size_t buffered_bytes() const { return scanner_->partial_bytes(); }

 private:
  bool protobuf_ = false;
  bool status_checked_ = false;
  bool done_ = false;
};

}  // namespace kcm::client
