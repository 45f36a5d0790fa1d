// WatchStream: the frames of one WATCH response (watch.Interface over the raw wire format,
// spec 1.8). One thread calls Next(); Stop() may be called from any thread and makes a blocked
// Next() return promptly. The stream must outlive concurrent Stop() callers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pkg/client/json_frame_scanner.h"
#include "pkg/util/result.h"

namespace kcm::client {

class HttpStream;

class WatchStream {
 public:
  // on_status is told the HTTP status once it is known (for metrics); may be empty.
  WatchStream(std::unique_ptr<HttpStream> stream, std::function<void(int status)> on_status);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // The next frame: the raw `{"type":...,"object":...}` text (padded, see json_padding.h; ERROR
  // events pass through as frames). nullopt: the server closed the stream cleanly or Stop() was
  // called. Errors: a non-2xx answer to the watch request (decoded Status, e.g. 410 Expired), a
  // transport failure (code 0), or a truncated/undecodable stream (code 500, reason
  // ClientWatchDecoding). After an error or nullopt every later call returns nullopt.
  Result<std::optional<std::string>> Next();

  // Cancels the transfer; thread-safe and idempotent.
  void Stop();

 private:
  std::unique_ptr<HttpStream> stream_;
  std::function<void(int)> on_status_;
  JsonFrameScanner scanner_;
  bool status_checked_ = false;
  bool done_ = false;
};

}  // namespace kcm::client
