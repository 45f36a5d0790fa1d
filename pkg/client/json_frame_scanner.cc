#include "pkg/client/json_frame_scanner.h"

#include "pkg/client/api_errors.h"
#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

}  // namespace

void JsonFrameScanner::Feed(std::string_view data) {
  // Drop consumed bytes before growing, so the buffer stays about one frame long.
  if (start_ > 0 && start_ >= buf_.size() / 2) {
    buf_.erase(0, start_);
    pos_ -= start_;
    start_ = 0;
  }
  buf_.append(data);
}

Result<std::optional<std::string>> JsonFrameScanner::Next() {
  while (pos_ < buf_.size()) {
    const char c = buf_[pos_];
    if (depth_ == 0) {
      // Between frames: whitespace, then an object must start.
      if (IsSpace(c)) {
        ++pos_;
        start_ = pos_;
        continue;
      }
      if (c != '{') {
        return Error{500,
                     std::string(reason::kClientWatchDecoding),
                     "unable to decode an event from the watch stream: unexpected byte '" +
                         std::string(1, c) + "' between frames",
                     {}};
      }
      start_ = pos_;
      depth_ = 1;
      ++pos_;
      continue;
    }
    ++pos_;
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        ++depth_;
        break;
      case '}':
      case ']':
        if (--depth_ == 0) {
          std::string frame = PaddedCopy(std::string_view(buf_).substr(start_, pos_ - start_));
          start_ = pos_;
          return std::optional<std::string>(std::move(frame));
        }
        break;
      default:
        break;
    }
  }
  return std::optional<std::string>();
}

bool JsonFrameScanner::HasPartial() const {
  if (depth_ > 0) return true;
  for (std::size_t i = start_; i < buf_.size(); ++i) {
    if (!IsSpace(buf_[i])) return true;
  }
  return false;
}

}  // namespace kcm::client
