#include "pkg/server/zpage_text.h"

#include <random>

namespace kcm::server {

std::string ZpageTextHeader(std::string_view component, std::string_view page) {
  return "\n" + std::string(component) + " " + std::string(page) +
         "\nWarning: This endpoint is not meant to be machine parseable, has no formatting "
         "compatibility guarantees and is for debugging purposes only.\n";
}

std::string RandomZpageSeparator() {
  static constexpr const char* kSeparators[] = {":", ": ", "=", " "};
  std::random_device device;  // per call: no shared generator to guard
  return kSeparators[std::uniform_int_distribution<int>(0, 3)(device)];
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '"':
        out += "&#34;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace kcm::server
