// SharedText: immutable text that can share its bytes with another SharedText. The raw JSON of a
// cached ReplicaSet or Deployment is one; its `spec.template` text is another that points into the
// first (`Sub`), so the template is not a second copy of those bytes (docs/architecture.md,
// "Compact pod records"). Reads like a std::string_view; assigning text copies it into a new
// buffer. Thread-compatible; a value is never edited in place, so readers of a cached object need
// no lock.
#pragma once

#include <cstddef>
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

  // Two pieces back to back, in one buffer (an object's text around a removed member).
  static SharedText Concat(std::string_view a, std::string_view b);
  // [offset, offset + size) of `whole`, sharing its buffer. Requires the range inside `whole`.
  static SharedText Sub(const SharedText& whole, size_t offset, size_t size);

  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT(google-explicit-constructor)
  std::string str() const { return std::string(view_); }
  const char* data() const { return view_.data(); }
  size_t size() const { return view_.size(); }
  bool empty() const { return view_.empty(); }
  // True when both views lie in one buffer (a Sub of the other, or copies of one value).
  bool SharesBufferWith(const SharedText& other) const {
    return owner_ != nullptr && owner_ == other.owner_;
  }

  friend bool operator==(const SharedText& a, const SharedText& b) { return a.view_ == b.view_; }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.view_ == b; }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.view_ == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.view_ == b; }

 private:
  std::shared_ptr<const char[]> owner_;  // null when empty
  std::string_view view_;
};

std::ostream& operator<<(std::ostream& os, const SharedText& text);

}  // namespace kcm::api
