#include "pkg/client/length_frame_scanner.h"

#include <algorithm>
#include <cstdint>

namespace kcm::client {
namespace {

std::uint32_t FrameLength(std::string_view prefix) {
  std::uint32_t n = 0;
  for (std::size_t i = 0; i < 4; ++i) n = (n << 8) | static_cast<std::uint8_t>(prefix[i]);
  return n;
}

}  // namespace

bool LengthFrameScanner::OverLimit(std::uint32_t n) {
  if (max_frame_ == 0 || n <= max_frame_) return false;
  FailTooLarge();
  return true;
}

void LengthFrameScanner::Feed(std::string_view data) {
  if (frames_.failed()) return;
  // A frame begun in an earlier read takes from data only its missing bytes.
  if (!partial_.empty()) {
    if (partial_.size() < 4) {
      const std::size_t take = std::min(4 - partial_.size(), data.size());
      partial_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (partial_.size() < 4) return;
    }
    const std::uint32_t n = FrameLength(partial_);
    if (OverLimit(n)) return;
    const std::size_t take = std::min(4 + std::size_t{n} - partial_.size(), data.size());
    partial_.append(data.substr(0, take));
    data.remove_prefix(take);
    if (partial_.size() < 4 + std::size_t{n}) return;
    std::string frame = std::move(partial_);
    partial_.clear();
    frame.erase(0, 4);
    frames_.Push(std::move(frame));
  }
  // Frames wholly inside data are copied out of it once; only an unfinished one is kept.
  while (data.size() >= 4) {
    const std::uint32_t n = FrameLength(data);
    if (OverLimit(n)) return;
    if (data.size() - 4 < n) break;
    frames_.Push(std::string(data.substr(4, n)));
    data.remove_prefix(4 + std::size_t{n});
  }
  partial_.append(data);
}

}  // namespace kcm::client
