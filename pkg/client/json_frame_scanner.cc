#include "pkg/client/json_frame_scanner.h"

#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// After a big frame, do not keep its capacity for the rest of the watch.
constexpr std::size_t kKeepCapacity = std::size_t{1} << 20;

}  // namespace

void JsonFrameScanner::Feed(std::string_view data) {
  if (error_) return;
  std::size_t run = 0;  // start of this frame's bytes within data
  for (std::size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (depth_ == 0) {
      // Between frames: whitespace, then an object must start.
      if (IsSpace(c)) {
        run = i + 1;
        continue;
      }
      if (c != '{') {
        error_ = Error{500,
                       std::string(errors::reason::kClientWatchDecoding),
                       "unable to decode an event from the watch stream: unexpected byte '" +
                           std::string(1, c) + "' between frames",
                       {}};
        return;
      }
      run = i;
      depth_ = 1;
    } else if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
    } else {
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
          --depth_;
          break;
        default:
          break;
      }
    }
    const std::size_t frame_len = partial_.size() + (i + 1 - run);
    if (max_frame_ > 0 && frame_len > max_frame_) {
      error_ = Error::Transport(
          TransportCause::kTooLarge,
          "watch event over the " + std::to_string(max_frame_) + "-byte frame limit");
      std::string().swap(partial_);
      return;
    }
    if (depth_ == 0) {
      const std::string_view tail = data.substr(run, i + 1 - run);
      if (partial_.empty()) {
        ready_.push_back(PaddedCopy(tail));
      } else {
        partial_.append(tail);
        ready_.push_back(PaddedCopy(partial_));
        partial_.clear();
        if (partial_.capacity() > kKeepCapacity) std::string().swap(partial_);
      }
      run = i + 1;
    }
  }
  if (depth_ > 0) partial_.append(data.substr(run));
}

Result<std::optional<std::string>> JsonFrameScanner::Next() {
  if (!ready_.empty()) {
    std::string frame = std::move(ready_.front());
    ready_.pop_front();
    return std::optional<std::string>(std::move(frame));
  }
  if (error_) return *error_;
  return std::optional<std::string>();
}

bool JsonFrameScanner::HasPartial() const {
  return depth_ > 0 || !partial_.empty();
}

}  // namespace kcm::client
