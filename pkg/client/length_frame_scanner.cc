#include "pkg/client/length_frame_scanner.h"

#include <cstdint>

namespace kcm::client {

void LengthFrameScanner::Feed(std::string_view data) {
  if (error_) return;
  // Drop what was consumed before growing (amortized O(1) per byte).
  if (pos_ > 0 && pos_ >= buffer_.size() / 2) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(data);
}

Result<std::optional<std::string>> LengthFrameScanner::Next() {
  using Frame = std::optional<std::string>;
  if (error_) return *error_;
  const std::size_t available = buffer_.size() - pos_;
  if (available < 4) return Frame();
  uint32_t n = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    n = (n << 8) | static_cast<uint8_t>(buffer_[pos_ + i]);
  }
  if (max_frame_ > 0 && n > max_frame_) {
    error_ = Error::Transport(
        TransportCause::kTooLarge,
        "watch event over the " + std::to_string(max_frame_) + "-byte frame limit");
    std::string().swap(buffer_);
    pos_ = 0;
    return *error_;
  }
  if (available - 4 < n) return Frame();
  std::string frame = buffer_.substr(pos_ + 4, n);
  pos_ += 4 + n;
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    pos_ = 0;
  }
  return Frame(std::move(frame));
}

}  // namespace kcm::client
