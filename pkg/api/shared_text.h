// SharedText: immutable text in a reference-counted buffer, which another SharedText may share
// (`Sub`), and which may be held deflated (`TextPacker`). The raw JSON of a cached ReplicaSet or
// Deployment is one; its `spec.template` text is a `Sub` of it, so the template is not a second
// copy of those bytes; and the decoder packs the object's text against a dictionary taken from an
// earlier object of the same kind, so that ~1.3 kB of JSON is held in ~130 B
// (docs/design/compact-raw-json.md).
//
// The text is read with `str()` (or `AppendTo`), which inflates a packed value: a write or a
// template comparison pays ~2 µs for it, the cache holds a tenth of the bytes. Assigning text
// copies it into a new buffer. A value is 16 bytes (buffer pointer, offset, size).
// Thread-compatible; a value is never edited in place, and the buffer's count is atomic, so readers
// of a cached object need no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace kcm::api {

class SharedText {
 public:
  SharedText() = default;
  // Copies `text` into a buffer of its own (none when empty).
  SharedText(std::string_view text);  // NOLINT(google-explicit-constructor): reads like a string
  SharedText(const std::string& text) : SharedText(std::string_view(text)) {}  // NOLINT
  SharedText(const char* text) : SharedText(std::string_view(text)) {}         // NOLINT
  SharedText(const SharedText& other) noexcept;
  SharedText(SharedText&& other) noexcept;
  SharedText& operator=(const SharedText& other) noexcept;
  SharedText& operator=(SharedText&& other) noexcept;
  ~SharedText();

  // Two pieces back to back, in one buffer (an object's text around a removed member).
  static SharedText Concat(std::string_view a, std::string_view b);
  // [offset, offset + size) of `whole`'s text, sharing its buffer (packed or not). Requires the
  // range inside `whole`.
  static SharedText Sub(const SharedText& whole, size_t offset, size_t size);
  // `part`'s range of `from` as the same range of `to`, a value holding the same text as `from`
  // (a repacked copy): a template's view moved onto its object's repacked text. A copy of `part`
  // when it does not lie in `from`'s buffer.
  static SharedText Rebase(const SharedText& part, const SharedText& from, const SharedText& to);

  // The text; inflated when the buffer is packed (only the bytes up to the end of this range).
  std::string str() const;
  // Appends the text to *out.
  void AppendTo(std::string* out) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // True when the buffer holds the text deflated.
  bool packed() const;
  // The bytes the buffer holds for its text (the deflated size when packed): what the value costs
  // in memory beside the buffer's 24-byte header, shared with every value of that buffer.
  size_t stored_size() const;
  // True when both values lie in one buffer (a Sub of the other, or copies of one value).
  bool SharesBufferWith(const SharedText& other) const {
    return block_ != nullptr && block_ == other.block_;
  }

  friend bool operator==(const SharedText& a, const SharedText& b);
  friend bool operator==(const SharedText& a, std::string_view b);
  friend bool operator==(const SharedText& a, const std::string& b) {
    return a == std::string_view(b);
  }
  friend bool operator==(const SharedText& a, const char* b) { return a == std::string_view(b); }

  struct Block;  // opaque: the buffer's header and bytes (shared_text.cc)

 private:
  friend class TextPacker;
  SharedText(const Block* block, size_t offset, size_t size);
  // The text of a plain (not packed) buffer; a view of this value's range.
  std::string_view PlainView() const;

  const Block* block_ = nullptr;  // null when empty; holds one count of the block
  uint32_t offset_ = 0;
  uint32_t size_ = 0;
};

std::ostream& operator<<(std::ostream& os, const SharedText& text);

// TextPacker: makes SharedTexts held deflated (zlib, raw deflate) against a preset dictionary per
// `kind`: the first text of that kind packed by this packer, itself kept plain (and shared with
// the value that brought it), so that small documents of one shape — the ReplicaSets or
// Deployments of one informer — compress to a tenth instead of a half. A packed value holds a
// count of its dictionary's buffer, so it can be inflated anywhere, after the packer is gone.
// One per Decoder; not thread-safe.
class TextPacker {
 public:
  TextPacker();
  ~TextPacker();
  TextPacker(TextPacker&&) noexcept;
  TextPacker& operator=(TextPacker&&) noexcept;

  // A dictionary is a text of at most this size (larger ones would reach past the deflate window).
  static constexpr size_t kMaxDictionary = 2048;
  // Texts shorter than this stay plain (not worth a stream).
  static constexpr size_t kMinPacked = 128;

  // `a` then `b` as one text: packed when that is smaller, else plain (the first text of a kind,
  // kept as its dictionary, is plain).
  SharedText Pack(std::string_view kind, std::string_view a, std::string_view b);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcm::api
