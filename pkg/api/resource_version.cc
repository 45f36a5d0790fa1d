#include "pkg/api/resource_version.h"

#include <charconv>
#include <ostream>
#include <utility>

namespace kcm::api {
namespace {

// 2^63 - 1 has 19 digits; any 19-digit text fits in a uint64_t, and those below 2^63 keep the
// tag bit free.
constexpr size_t kMaxDigits = 19;

// The number `text` is the canonical decimal form of, if it is one below 2^63.
bool ParseCanonical(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > kMaxDigits || (text[0] == '0' && text.size() > 1)) {
    return false;
  }
  uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n >> 63 != 0) return false;
  *out = n;
  return true;
}

}  // namespace

ResourceVersion::ResourceVersion(std::string_view text) {
  if (text.empty()) return;
  if (uint64_t n = 0; ParseCanonical(text, &n)) {
    bits_ = (static_cast<uintptr_t>(n) << 1) | 1;
  } else {
    bits_ = reinterpret_cast<uintptr_t>(new std::string(text));
  }
}

ResourceVersion::ResourceVersion(const ResourceVersion& other) : bits_(other.bits_) {
  if (bits_ != 0 && !other.IsNumber())
    bits_ = reinterpret_cast<uintptr_t>(new std::string(*other.text()));
}

ResourceVersion& ResourceVersion::operator=(const ResourceVersion& other) {
  if (this != &other) *this = ResourceVersion(other);
  return *this;
}

ResourceVersion& ResourceVersion::operator=(ResourceVersion&& other) noexcept {
  if (this != &other) {
    clear();
    bits_ = std::exchange(other.bits_, 0);
  }
  return *this;
}

void ResourceVersion::clear() {
  if (bits_ != 0 && !IsNumber()) delete text();
  bits_ = 0;
}

void ResourceVersion::AppendTo(std::string* out) const {
  if (bits_ == 0) return;
  if (!IsNumber()) {
    out->append(*text());
    return;
  }
  char buf[kMaxDigits + 1];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<uint64_t>(bits_ >> 1));
  out->append(buf, end);
}

std::string ResourceVersion::str() const {
  std::string out;
  AppendTo(&out);
  return out;
}

bool operator==(const ResourceVersion& a, const ResourceVersion& b) {
  if (a.bits_ == b.bits_) return true;
  // A number and a text are never equal: a text is held as a number whenever it is one.
  if (a.IsNumber() || b.IsNumber() || a.empty() || b.empty()) return false;
  return std::string_view(*a.text()) == std::string_view(*b.text());
}

bool operator==(const ResourceVersion& a, std::string_view b) {
  if (a.empty() || b.empty()) return a.empty() && b.empty();
  // Compared as views: a std::string beside a string_view would also match this operator
  // (both convert), and call it again.
  if (!a.IsNumber()) return std::string_view(*a.text()) == b;
  uint64_t n = 0;
  return ParseCanonical(b, &n) && (static_cast<uintptr_t>(n) << 1 | 1) == a.bits_;
}

std::ostream& operator<<(std::ostream& os, const ResourceVersion& rv) {
  return os << rv.str();
}

}  // namespace kcm::api
