// FrameQueue: the complete frames a watch frame scanner (LengthFrameScanner, JsonFrameScanner)
// found in the bytes fed so far, handed out in order, then the error that ended the stream, if
// any: a reader gets every frame that preceded the error before the error. Thread-compatible.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "pkg/util/result.h"

namespace kcm::client {

class FrameQueue {
 public:
  void Push(std::string frame) { ready_.push_back(std::move(frame)); }
  // The stream ends with error after the frames pushed so far; later bytes are ignored.
  void Fail(Error error) { error_ = std::move(error); }
  bool failed() const { return error_.has_value(); }
  // Complete frames not yet handed out.
  std::size_t size() const { return ready_.size(); }

  // The next frame, else the error, else nullopt (more bytes are needed).
  Result<std::optional<std::string>> Next() {
    // One optional, returned on both paths (GCC 12 at -O1 with sanitizers takes a temporary
    // empty optional's string for maybe-uninitialized once this is inlined).
    std::optional<std::string> frame;
    if (!ready_.empty()) {
      frame.emplace(std::move(ready_.front()));
      ready_.pop_front();
    } else if (error_) {
      return *error_;
    }
    return frame;
  }

 private:
  std::deque<std::string> ready_;
  std::optional<Error> error_;
};

}  // namespace kcm::client
