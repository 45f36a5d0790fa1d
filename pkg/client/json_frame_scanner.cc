#include "pkg/client/json_frame_scanner.h"

#include <array>
#include <cstring>

#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// After a big frame, do not keep its capacity for the rest of the watch.
constexpr std::size_t kKeepCapacity = std::size_t{1} << 20;

// The bytes that matter outside a string: a string's start and the brackets.
constexpr std::array<bool, 256> kStructural = [] {
  std::array<bool, 256> t{};
  for (const unsigned char c : {'"', '{', '[', '}', ']'}) t[c] = true;
  return t;
}();

}  // namespace

// Byte runs that cannot end a frame (a string's body, the scalars and separators between
// brackets) are skipped by tight loops; the limit is checked where a frame ends and for what is
// left unfinished at the end of the read, which holds the same frames to it as a check per byte.
void JsonFrameScanner::Feed(std::string_view data) {
  if (frames_.failed()) return;
  const std::size_t n = data.size();
  std::size_t run = 0;  // start of this frame's bytes within data
  std::size_t i = 0;
  while (i < n) {
    if (depth_ == 0) {
      // Between frames: whitespace, then an object must start.
      const char c = data[i];
      if (IsSpace(c)) {
        run = ++i;
        continue;
      }
      if (c != '{') {
        frames_.Fail(Error{500,
                           std::string(errors::reason::kClientWatchDecoding),
                           "unable to decode an event from the watch stream: unexpected byte '" +
                               std::string(1, c) + "' between frames",
                           {}});
        return;
      }
      run = i++;
      depth_ = 1;
      continue;
    }
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
        ++i;
        continue;
      }
      // The closing quote by memchr, then a backslash before it (rare outside annotations).
      const char* base = data.data();
      const void* quote = std::memchr(base + i, '"', n - i);
      const std::size_t end =
          quote == nullptr ? n : static_cast<std::size_t>(static_cast<const char*>(quote) - base);
      const void* backslash = std::memchr(base + i, '\\', end - i);
      i = backslash == nullptr
              ? end
              : static_cast<std::size_t>(static_cast<const char*>(backslash) - base);
      if (i == n) break;
      if (data[i] == '\\') {
        escaped_ = true;
      } else {
        in_string_ = false;
      }
      ++i;
      continue;
    }
    while (i < n && !kStructural[static_cast<unsigned char>(data[i])]) ++i;
    if (i == n) break;
    switch (data[i++]) {
      case '"':
        in_string_ = true;
        break;
      case '{':
      case '[':
        ++depth_;
        break;
      default:  // '}' or ']'
        --depth_;
        break;
    }
    if (depth_ == 0) {
      const std::string_view tail = data.substr(run, i - run);
      if (max_frame_ > 0 && partial_.size() + tail.size() > max_frame_) {
        FailTooLarge();
        return;
      }
      if (partial_.empty()) {
        frames_.Push(PaddedCopy(tail));
      } else {
        partial_.append(tail);
        frames_.Push(PaddedCopy(partial_));
        partial_.clear();
        if (partial_.capacity() > kKeepCapacity) std::string().swap(partial_);
      }
      run = i;
    }
  }
  if (depth_ > 0) {
    if (max_frame_ > 0 && partial_.size() + (n - run) > max_frame_) {
      FailTooLarge();
      return;
    }
    partial_.append(data.substr(run));
  }
}

}  // namespace kcm::client
