#include "pkg/api/uid.h"

#include <ostream>

namespace kcm::api {
namespace {

constexpr size_t kUuidTextSize = 36;
constexpr char kHex[] = "0123456789abcdef";

// Positions of the four dashes in 8-4-4-4-12.
constexpr bool IsDashAt(size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

int LowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper-case digits are not canonical: kept as text so they read back unchanged
}

// Parses canonical lowercase UUID text; false for anything else, and for the nil UUID (all zero
// bytes mean "empty" in Uid).
bool ParseUuid(std::string_view text, std::array<uint8_t, 16>* out) {
  if (text.size() != kUuidTextSize) return false;
  size_t byte = 0;
  for (size_t i = 0; i < kUuidTextSize;) {
    if (IsDashAt(i)) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    const int hi = LowerHexValue(text[i]);
    const int lo = LowerHexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[byte++] = static_cast<uint8_t>(hi << 4 | lo);
    i += 2;
  }
  return *out != std::array<uint8_t, 16>{};
}

}  // namespace

Uid::Uid(std::string_view text) {
  if (text.empty()) return;
  if (!ParseUuid(text, &bytes_)) {
    bytes_ = {};
    text_ = std::make_unique<const std::string>(text);
  }
}

Uid::Uid(const Uid& other) : bytes_(other.bytes_) {
  if (other.text_) text_ = std::make_unique<const std::string>(*other.text_);
}

Uid& Uid::operator=(const Uid& other) {
  if (this != &other) *this = Uid(other);
  return *this;
}

void Uid::FormatUuid(char* out) const {
  size_t byte = 0;
  for (size_t i = 0; i < kUuidTextSize;) {
    if (IsDashAt(i)) {
      out[i++] = '-';
      continue;
    }
    out[i] = kHex[bytes_[byte] >> 4];
    out[i + 1] = kHex[bytes_[byte] & 0xf];
    ++byte;
    i += 2;
  }
}

std::string Uid::str() const {
  if (text_) return *text_;
  if (empty()) return {};
  std::string out(kUuidTextSize, '\0');
  FormatUuid(out.data());
  return out;
}

bool operator==(const Uid& a, const Uid& b) {
  // One text has one form: canonical UUID text is never held as text, so forms that differ
  // mean texts that differ.
  if (a.text_ && b.text_) return std::string_view(*a.text_) == std::string_view(*b.text_);
  if (a.text_ || b.text_) return false;
  return a.bytes_ == b.bytes_;
}

bool operator==(const Uid& a, std::string_view b) {
  if (a.text_) return std::string_view(*a.text_) == b;
  if (a.empty()) return b.empty();
  if (b.size() != kUuidTextSize) return false;
  char text[kUuidTextSize];
  a.FormatUuid(text);
  return std::string_view(text, kUuidTextSize) == b;
}

std::strong_ordering operator<=>(const Uid& a, const Uid& b) {
  if (!a.text_ && !b.text_) return a.bytes_ <=> b.bytes_;  // "" (zero bytes) sorts first too
  return a.str() <=> b.str();
}

std::ostream& operator<<(std::ostream& os, const Uid& uid) {
  return os << uid.str();
}

}  // namespace kcm::api
