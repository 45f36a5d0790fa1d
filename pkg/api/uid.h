// Uid: metadata.uid held as its 16 bytes when it is a UUID in the canonical lowercase text form
// the API server generates (8-4-4-4-12 hex digits), else as the text itself, so any uid — a
// hand-written object's, an upper-case one — reads back exactly as it came. Every cached object
// has one: 24 bytes instead of a std::string and the 37-byte heap block behind it (docs/
// design/compact-pod-record.md). Compares and orders as its text does. Thread-compatible.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace kcm::api {

class Uid {
 public:
  Uid() = default;
  Uid(std::string_view text);  // NOLINT(google-explicit-constructor): assigned like the string
  Uid(const std::string& text) : Uid(std::string_view(text)) {}  // NOLINT
  Uid(const char* text) : Uid(std::string_view(text)) {}         // NOLINT
  Uid(const Uid& other);
  Uid& operator=(const Uid& other);
  Uid(Uid&&) noexcept = default;
  Uid& operator=(Uid&&) noexcept = default;
  ~Uid() = default;

  bool empty() const { return text_ == nullptr && bytes_ == std::array<uint8_t, 16>{}; }
  // The uid's text, as it was decoded.
  std::string str() const;
  operator std::string() const { return str(); }  // NOLINT(google-explicit-constructor)
  // True when held as 16 bytes (canonical UUID text), false for other text and for "".
  bool IsCanonicalUuid() const { return text_ == nullptr && !empty(); }
  // What the uid is held as (its 16 bytes, or its text), for hashing without making the text:
  // equal uids are held alike, so they give equal bytes.
  std::string_view HeldBytes() const {
    return text_ != nullptr
               ? std::string_view(*text_)
               : std::string_view(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
  }

  friend bool operator==(const Uid& a, const Uid& b);
  friend bool operator==(const Uid& a, std::string_view b);
  friend bool operator==(const Uid& a, const char* b) { return a == std::string_view(b); }
  friend bool operator==(const Uid& a, const std::string& b) { return a == std::string_view(b); }
  // The order of the texts (for canonical UUIDs the bytes' order is the text's).
  friend std::strong_ordering operator<=>(const Uid& a, const Uid& b);

 private:
  // Writes the 36 characters of the canonical text of bytes_ to out.
  void FormatUuid(char* out) const;

  // Held as bytes_ (text_ null, bytes_ not all zero), as text_ (a uid that is not canonical
  // UUID text, and the nil UUID), or empty (text_ null, bytes_ all zero).
  std::array<uint8_t, 16> bytes_{};
  std::unique_ptr<const std::string> text_;
};

std::ostream& operator<<(std::ostream& os, const Uid& uid);

}  // namespace kcm::api
