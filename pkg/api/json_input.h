// JsonInput and PaddedBuffer: the padding contract of the decoders. simdjson reads up to
// kJsonPadding (64) bytes past the end of the JSON text; a caller that can guarantee those bytes
// are readable (e.g. a PaddedBuffer it filled from the socket) passes JsonInput::Padded and the
// decoder reads in place; any other input is copied once into the decoder's scratch buffer.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace kcm::api {

inline constexpr size_t kJsonPadding = 64;  // == SIMDJSON_PADDING (checked in the .cc)

struct JsonInput {
  std::string_view text;
  // True only when kJsonPadding readable bytes follow text.end().
  bool padded = false;

  JsonInput(std::string_view t) : text(t) {}    // NOLINT(google-explicit-constructor): copies
  JsonInput(const std::string& t) : text(t) {}  // NOLINT(google-explicit-constructor): copies
  JsonInput(const char* t) : text(t) {}         // NOLINT(google-explicit-constructor): copies
  // The caller promises kJsonPadding readable bytes after `t` (content irrelevant).
  static JsonInput Padded(std::string_view t) {
    JsonInput in(t);
    in.padded = true;
    return in;
  }
  // A std::string whose capacity leaves kJsonPadding bytes after size() (pkg/client reserves
  // them) is read in place; otherwise it is copied. The string must outlive the decode call.
  static JsonInput FromString(const std::string& s) {
    JsonInput in{std::string_view(s)};
    in.padded = s.capacity() >= s.size() + kJsonPadding;
    return in;
  }
};

// A growable byte buffer that always keeps kJsonPadding zeroed bytes after its contents, so any
// sub-range of it can be decoded without a copy. Used by the watch stream reader: Append what the
// socket delivered, decode complete frames via Input(), Consume them.
class PaddedBuffer {
 public:
  PaddedBuffer() : storage_(kJsonPadding, '\0') {}

  void Append(std::string_view data) {
    size_t need = size_ + data.size() + kJsonPadding;
    if (need > storage_.size()) storage_.resize(std::max(need, storage_.size() * 2), '\0');
    std::memcpy(storage_.data() + size_, data.data(), data.size());
    size_ += data.size();
    std::memset(storage_.data() + size_, 0, kJsonPadding);
  }
  // Drops the first n bytes (n ≤ size()).
  void Consume(size_t n) {
    std::memmove(storage_.data(), storage_.data() + n, size_ - n);
    size_ -= n;
    std::memset(storage_.data() + size_, 0, kJsonPadding);
  }
  void Clear() { Consume(size_); }

  std::string_view view() const { return std::string_view(storage_.data(), size_); }
  size_t size() const { return size_; }
  // The whole contents, or a sub-range [pos, pos+n), as padded input.
  JsonInput Input() const { return JsonInput::Padded(view()); }
  JsonInput Input(size_t pos, size_t n) const { return JsonInput::Padded(view().substr(pos, n)); }

 private:
  std::string storage_;
  size_t size_ = 0;
};

}  // namespace kcm::api
