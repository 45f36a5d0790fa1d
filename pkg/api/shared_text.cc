#include "pkg/api/shared_text.h"

#include <cstring>
#include <ostream>

namespace kcm::api {

SharedText SharedText::Concat(std::string_view a, std::string_view b) {
  SharedText out;
  const size_t n = a.size() + b.size();
  if (n == 0) return out;
  // One allocation for the control block and the bytes; they are written below, so not zeroed.
  std::shared_ptr<char[]> buf = std::make_shared_for_overwrite<char[]>(n);
  if (!a.empty()) std::memcpy(buf.get(), a.data(), a.size());
  if (!b.empty()) std::memcpy(buf.get() + a.size(), b.data(), b.size());
  out.view_ = std::string_view(buf.get(), n);
  out.owner_ = std::move(buf);
  return out;
}

SharedText::SharedText(std::string_view text) : SharedText(Concat(text, {})) {}

SharedText SharedText::Sub(const SharedText& whole, size_t offset, size_t size) {
  SharedText out;
  if (size == 0) return out;
  out.owner_ = whole.owner_;
  out.view_ = whole.view_.substr(offset, size);
  return out;
}

std::ostream& operator<<(std::ostream& os, const SharedText& text) {
  return os << text.view();
}

}  // namespace kcm::api
