// libFuzzer target for the watch stream's frame scanners (JsonFrameScanner, LengthFrameScanner).
// Input: one byte choosing the frame limit (0 = unlimited, else 2 × the byte), one byte seeding
// how the stream is cut into reads, then the stream. Each scanner is fed the stream cut into
// reads and, separately, in one read; the two must yield the same frames and the same error.
// Checked besides: no frame is over the limit and no more than the limit is buffered; the frames
// are the stream's own bytes in order (JSON: the top-level objects between whitespace, as a
// byte-at-a-time reference scanner finds them; length-delimited: each frame's 4-byte prefix
// states its size); JSON frames carry simdjson's padding; HasPartial() is true exactly when bytes
// of an unfinished frame are left.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "pkg/client/json_frame_scanner.h"
#include "pkg/client/json_padding.h"
#include "pkg/client/length_frame_scanner.h"

namespace {

using kcm::client::JsonFrameScanner;
using kcm::client::LengthFrameScanner;

using kcm::fuzz::Check;

// What a scanner handed out: its frames, then its error (reason and message) if the stream
// failed, and whether an unfinished frame was left.
struct Outcome {
  std::vector<std::string> frames;
  std::optional<std::string> error;
  bool partial = false;
  bool operator==(const Outcome&) const = default;
};

// Read sizes from a tiny LCG seeded by the input's second byte: 1..64 bytes, now and then 4 KB.
std::vector<std::string_view> CutIntoReads(std::string_view stream, uint8_t seed) {
  std::vector<std::string_view> reads;
  uint32_t state = seed * 2654435761u + 1;
  while (!stream.empty()) {
    state = state * 1103515245u + 12345u;
    size_t n = (state >> 16) % 8 == 0 ? 4096 : 1 + (state >> 8) % 64;
    n = std::min(n, stream.size());
    reads.push_back(stream.substr(0, n));
    stream.remove_prefix(n);
  }
  return reads;
}

template <typename Scanner>
Outcome Scan(const std::vector<std::string_view>& reads, size_t limit, size_t max_buffered) {
  Scanner scanner(limit);
  Outcome out;
  for (std::string_view read : reads) {
    scanner.Feed(read);
    if (limit > 0) Check(scanner.partial_bytes() <= max_buffered);
    while (true) {
      auto next = scanner.Next();
      if (!next.ok()) {
        // (What is left buffered after an error depends on where the reads were cut.)
        out.error = next.error().reason + ": " + next.error().message;
        return out;
      }
      if (!next->has_value()) break;
      std::string frame = std::move(**next);
      if (limit > 0) Check(frame.size() <= limit);
      out.frames.push_back(std::move(frame));
    }
  }
  out.partial = scanner.HasPartial();
  return out;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// The top-level objects of `stream` found one byte at a time, as the scanner's contract states
// them; `*bad` is set when a byte between objects is neither whitespace nor '{', `*rest` to the
// bytes of an unfinished object.
std::vector<std::string_view> ReferenceJsonFrames(std::string_view stream, bool* bad,
                                                  std::string_view* rest) {
  std::vector<std::string_view> frames;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t start = 0;
  *bad = false;
  for (size_t i = 0; i < stream.size(); ++i) {
    const char c = stream[i];
    if (depth == 0) {
      if (IsSpace(c)) continue;
      if (c != '{') {
        *bad = true;
        *rest = {};
        return frames;
      }
      start = i;
      depth = 1;
    } else if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) frames.push_back(stream.substr(start, i + 1 - start));
    }
  }
  *rest = depth > 0 ? stream.substr(start) : std::string_view();
  return frames;
}

void CheckJson(std::string_view stream, size_t limit, uint8_t seed) {
  const Outcome cut = Scan<JsonFrameScanner>(CutIntoReads(stream, seed), limit, limit);
  const Outcome whole = Scan<JsonFrameScanner>({stream}, limit, limit);
  Check(cut == whole);
  bool bad = false;
  std::string_view rest;
  std::vector<std::string_view> want = ReferenceJsonFrames(stream, &bad, &rest);
  if (!whole.error) {
    Check(!bad);
    Check(whole.frames.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) Check(whole.frames[i] == want[i]);
    Check(whole.partial == !rest.empty());
    if (limit > 0) Check(rest.size() <= limit);
  } else {
    // The frames before the error are the reference's first ones; the error is the bad byte or
    // a frame (finished or not) over the limit.
    Check(whole.frames.size() <= want.size());
    for (size_t i = 0; i < whole.frames.size(); ++i) Check(whole.frames[i] == want[i]);
    const bool too_large =
        limit > 0 && (whole.frames.size() < want.size() ? want[whole.frames.size()].size() > limit
                                                        : rest.size() > limit);
    Check(too_large || (bad && whole.frames.size() == want.size()));
  }
  // The frames are padded for simdjson (json_padding.h).
  JsonFrameScanner scanner(limit);
  scanner.Feed(stream);
  while (true) {
    auto next = scanner.Next();
    if (!next.ok() || !next->has_value()) break;
    Check((*next)->capacity() >= (*next)->size() + kcm::client::kJsonPadding);
  }
}

void CheckLength(std::string_view stream, size_t limit, uint8_t seed) {
  // The unfinished frame is held with its 4-byte prefix.
  const Outcome cut = Scan<LengthFrameScanner>(CutIntoReads(stream, seed), limit, limit + 4);
  const Outcome whole = Scan<LengthFrameScanner>({stream}, limit, limit + 4);
  Check(cut == whole);
  size_t pos = 0;
  for (const std::string& frame : whole.frames) {
    Check(stream.size() - pos >= 4 + frame.size());
    uint32_t n = 0;
    for (size_t i = 0; i < 4; ++i) n = (n << 8) | static_cast<uint8_t>(stream[pos + i]);
    Check(n == frame.size());
    Check(stream.substr(pos + 4, n) == frame);
    pos += 4 + n;
  }
  if (whole.error) {
    // Only a prefix over the limit ends the stream.
    Check(limit > 0 && stream.size() - pos >= 4);
    uint32_t n = 0;
    for (size_t i = 0; i < 4; ++i) n = (n << 8) | static_cast<uint8_t>(stream[pos + i]);
    Check(n > limit);
  } else {
    Check(whole.partial == (pos < stream.size()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t limit = size_t{data[0]} * 2;
  const uint8_t seed = data[1];
  std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
  CheckJson(stream, limit, seed);
  CheckLength(stream, limit, seed);
  return 0;
}
