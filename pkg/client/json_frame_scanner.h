// JsonFrameScanner: splits a byte stream into complete top-level JSON objects (the watch wire
// format, spec 1.8: values newline-separated or back to back, split across reads at any byte).
// It tracks nesting and strings only; it does not validate the JSON. Thread-compatible.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::client {

class JsonFrameScanner {
 public:
  // Appends received bytes.
  void Feed(std::string_view data);
  // The next complete frame (padded, see json_padding.h), nullopt if more bytes are needed, or an
  // error when the stream holds something other than an object at the top level.
  Result<std::optional<std::string>> Next();
  // True when bytes of an unfinished frame are buffered (a stream ending now is truncated).
  bool HasPartial() const;

 private:
  std::string buf_;
  std::size_t start_ = 0;  // first byte of the frame being scanned
  std::size_t pos_ = 0;    // next byte to scan
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace kcm::client
