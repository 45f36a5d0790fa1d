#include "pkg/client/answer_head.h"

#include "pkg/util/strings.h"

namespace kcm::client {
namespace {

// True when `line` starts with header `name` followed by ':' (names are case-insensitive).
bool IsHeader(std::string_view line, std::string_view name) {
  return line.size() > name.size() && line[name.size()] == ':' &&
         EqualsIgnoreCase(line.substr(0, name.size()), name);
}

// The value after "name:", without the surrounding blanks and the line's CRLF.
std::string_view HeaderValue(std::string_view line, std::size_t name_size) {
  return Trim(line.substr(name_size + 1), " \t\r\n");
}

// A Content-Length value as net/http's parseContentLength takes it: decimal digits only, no
// sign, no more than fit in 63 bits.
std::optional<std::uint64_t> ParseContentLength(std::string_view v) {
  if (v.empty() || v.size() > 18) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return n;
}

Error Refused(std::string what) {
  return Error::Transport(TransportCause::kOther, "malformed answer: " + std::move(what));
}

}  // namespace

Status AnswerHead::Add(std::string_view line) {
  bytes_ += line.size();
  if (bytes_ > kMaxAnswerHeadBytes) {
    return Refused("head over " + std::to_string(kMaxAnswerHeadBytes) + " bytes");
  }
  if (line.starts_with("HTTP/")) {
    // A status line: every head before it was an interim answer (libcurl reports only 1xx heads
    // and the final one here; redirects are not followed).
    if (++status_lines_ > kMaxInterimAnswers + 1) {
      return Refused("more than " + std::to_string(kMaxInterimAnswers) + " interim answers");
    }
    retry_after_.clear();
    content_type_.clear();
    content_length_.reset();
    return OkStatus();
  }
  if (IsHeader(line, "content-length")) {
    const std::string_view value = HeaderValue(line, 14);
    const auto n = ParseContentLength(value);
    if (!n) return Refused("bad Content-Length \"" + std::string(value.substr(0, 32)) + "\"");
    if (content_length_ && *content_length_ != *n) return Refused("conflicting Content-Length");
    content_length_ = n;
  } else if (IsHeader(line, "content-type")) {
    content_type_ = HeaderValue(line, 12);
  } else if (IsHeader(line, "retry-after")) {
    retry_after_ = HeaderValue(line, 11);
  }
  return OkStatus();
}

}  // namespace kcm::client
