// ResourceVersion: metadata.resourceVersion in 8 bytes. Clients treat it as opaque text (compared
// for equality, sent back as it came), but the API server's are decimal numbers (etcd revisions),
// so such a text is held as its number and any other text, exactly, behind a pointer. Every cached
// object has one: 8 bytes instead of a 32-byte std::string (docs/architecture.md, "Compact pod
// records"). Compares as its text does. Thread-compatible.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kcm::api {

class ResourceVersion {
 public:
  ResourceVersion() = default;
  ResourceVersion(std::string_view text);   // NOLINT(google-explicit-constructor): as the string
  ResourceVersion(const std::string& text)  // NOLINT(google-explicit-constructor)
      : ResourceVersion(std::string_view(text)) {}
  ResourceVersion(const char* text)  // NOLINT(google-explicit-constructor)
      : ResourceVersion(std::string_view(text)) {}
  ResourceVersion(const ResourceVersion& other);
  ResourceVersion& operator=(const ResourceVersion& other);
  ResourceVersion(ResourceVersion&& other) noexcept : bits_(other.bits_) { other.bits_ = 0; }
  ResourceVersion& operator=(ResourceVersion&& other) noexcept;
  ~ResourceVersion() { clear(); }

  bool empty() const { return bits_ == 0; }
  void clear();
  // The text, as it was decoded.
  std::string str() const;
  operator std::string() const { return str(); }  // NOLINT(google-explicit-constructor)
  // Appends the text to *out (no temporary string).
  void AppendTo(std::string* out) const;
  // True when held as a number (a canonical decimal text: digits, no leading zero but "0").
  bool IsNumber() const { return (bits_ & 1) != 0; }

  friend bool operator==(const ResourceVersion& a, const ResourceVersion& b);
  friend bool operator==(const ResourceVersion& a, std::string_view b);
  friend bool operator==(const ResourceVersion& a, const std::string& b) {
    return a == std::string_view(b);
  }
  friend bool operator==(const ResourceVersion& a, const char* b) {
    return a == std::string_view(b);
  }
  // Concatenation as with a std::string (log lines, test records).
  friend std::string operator+(const ResourceVersion& a, std::string_view b) {
    std::string out = a.str();
    out.append(b);
    return out;
  }
  friend std::string operator+(std::string_view a, const ResourceVersion& b) {
    std::string out(a);
    b.AppendTo(&out);
    return out;
  }

 private:
  // 0: empty. Odd: a number n held as 2n + 1 (n < 2^63). Even and not 0: a heap std::string.
  const std::string* text() const { return reinterpret_cast<const std::string*>(bits_); }
  uintptr_t bits_ = 0;
};

std::ostream& operator<<(std::ostream& os, const ResourceVersion& rv);

}  // namespace kcm::api
