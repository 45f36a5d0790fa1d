#include "pkg/client/internal/byte_channel.h"

#include <utility>

namespace kcm::client::internal {

void ByteChannel::Begin(Head head) {
  std::lock_guard lock(mu_);
  head_ = std::move(head);
}

bool ByteChannel::Offer(std::string_view data) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closed_) return true;
    if (held_.size() >= kMaxHeld) {
      paused_ = true;
      paused_on_loop_ = true;
      return false;
    }
    wake = held_.empty();
    held_.append(data);
  }
  if (wake) ready_.NotifyOne();
  return true;
}

void ByteChannel::End() {
  {
    std::lock_guard lock(mu_);
    ended_ = true;
  }
  ready_.NotifyAll();
}

void ByteChannel::Close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    std::string().swap(held_);
  }
  ready_.NotifyAll();
}

ByteChannel::Taken ByteChannel::Take(std::string* out) {
  Taken taken;
  std::unique_lock lock(mu_);
  ready_.Wait(lock, [this] { return closed_ || ended_ || !held_.empty(); });
  if (closed_) {
    taken.closed = true;
    return taken;
  }
  if (held_.empty()) {
    taken.ended = true;
    return taken;
  }
  taken.bytes = held_.size();
  if (out->empty()) {
    // The reader's buffer and ours trade places: no copy, and each keeps its capacity.
    out->swap(held_);
    held_.clear();
  } else {
    out->append(held_);
    held_.clear();
  }
  taken.resume = std::exchange(paused_, false);
  return taken;
}

ByteChannel::Head ByteChannel::head() const {
  std::lock_guard lock(mu_);
  return head_;
}

}  // namespace kcm::client::internal
