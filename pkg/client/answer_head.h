// AnswerHead: what the transport keeps of an answer's head lines as libcurl hands them over
// (CURLOPT_HEADERFUNCTION: every line of every head, interim 1xx heads and chunked trailers
// included), and the bounds a faulty or hostile peer meets there. libcurl itself bounds one line
// (CURL_MAX_HTTP_HEADER) and rejects malformed chunk sizes, but it reads any number of interim
// heads and takes a negative Content-Length as "read until close"; net/http refuses both (at
// most 5 interim answers, "bad Content-Length").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::client {

// All the head bytes of one answer, interim heads and trailers counted together. Under libcurl's
// own limit (300 kB since 7.88's security updates), so that a peer meets ours, with its reason;
// an API server's heads are a few hundred bytes.
inline constexpr std::size_t kMaxAnswerHeadBytes = std::size_t{256} << 10;
// Interim (1xx) answers before the final one; net/http's Transport gives up after 5.
inline constexpr int kMaxInterimAnswers = 5;

class AnswerHead {
 public:
  // One line as libcurl delivers it: a status line, a header line (CRLF included) or the empty
  // line that ends a head. An error means the answer must be abandoned; its message says why.
  Status Add(std::string_view line);

  // The final answer's headers; a new status line (an interim answer ended) starts them over.
  const std::string& retry_after() const { return retry_after_; }
  const std::string& content_type() const { return content_type_; }
  // The final answer's Content-Length, when it sent one.
  std::optional<std::uint64_t> content_length() const { return content_length_; }

 private:
  std::size_t bytes_ = 0;
  int status_lines_ = 0;
  std::string retry_after_;
  std::string content_type_;
  std::optional<std::uint64_t> content_length_;
};

}  // namespace kcm::client
