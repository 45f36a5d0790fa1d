// Answer: where every byte of a peer's answer lands, for a round trip (transport.cc) and for a
// stream (http_stream.cc) alike — libcurl's head, body and pre-send callbacks all point at one
// Answer per transfer — and the bounds those bytes meet (docs/design/client-transport.md, "What a
// peer cannot make it do"). Its callbacks run on the loop; the caller reads it once the transfer
// ended. A streamed body goes on to the transfer's ByteChannel, which its reader takes it from.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <optional>
#include <string>

#include "pkg/client/answer_head.h"
#include "pkg/client/internal/byte_channel.h"
#include "pkg/client/transport.h"
#include "pkg/util/result.h"

namespace kcm::client::internal {

// The bytes of an error (non-2xx) answer that are read. Enough for any Status the API server
// sends (a 422 with its causes is a few kB); past it the transfer stops and its connection is
// closed, not drained, and the answer is what was read. client-go reads at most
// maxUnstructuredResponseTextBytes (2 KiB) of a watch's error answer; the text an error keeps is
// cut to that (DecodeApiError).
inline constexpr std::size_t kMaxErrorBodyBytes = std::size_t{64} << 10;

class Answer {
 public:
  // `max_body`: the largest 2xx body (counted inflated), buffered or offered to `channel` (not
  // owned; nullptr = buffered); `replayable`: whether the request may be sent again after a
  // reused connection closed before any answer byte. A stream (`Kind::kStream`, a watch) runs for
  // as long as the server keeps it open: its reader's frames are bounded one by one, and
  // `max_body` bounds only a Content-Length it announces.
  enum class Kind { kRoundTrip, kStream };
  Answer(CURL* easy, std::size_t max_body, ByteChannel* channel, bool replayable,
         Kind kind = Kind::kRoundTrip);
  Answer(const Answer&) = delete;
  Answer& operator=(const Answer&) = delete;

  // Points the easy handle's head, body and pre-send callbacks at this answer.
  void Attach();

  // Whether the transfer, which libcurl ended with `rc`, gave a usable answer: it ended cleanly,
  // or an error answer's body was cut at kMaxErrorBodyBytes.
  bool Usable(CURLcode rc) const;
  // Why a callback stopped the transfer (a bound, the sink's error, a refused resend); libcurl
  // reports CURLE_WRITE_ERROR or CURLE_ABORTED_BY_CALLBACK for it, and this is the error to
  // return instead.
  std::optional<Error> TakeFailure() { return std::move(failure_); }

  long HttpStatus() const;
  const AnswerHead& head() const { return head_; }
  // The buffered body: a 2xx answer's without a channel, or an error answer's first
  // kMaxErrorBodyBytes.
  std::string& body() { return body_; }
  const std::string& body() const { return body_; }

 private:
  static int OnSend(void* user, char*, char*, int, int);
  static size_t OnHeader(char* data, size_t, size_t n, void* user);
  static size_t OnBody(char* data, size_t, size_t n, void* user);
  size_t Body(const char* data, size_t n);
  Error TooLarge() const;

  CURL* easy_;
  std::size_t max_body_;
  ByteChannel* channel_;
  bool replayable_;
  Kind kind_;
  int sends_ = 0;
  std::size_t delivered_ = 0;  // the 2xx body's bytes so far, inflated
  AnswerHead head_;
  std::string body_;
  // A 2xx body goes to the channel when there is one, an error answer's is buffered within
  // kMaxErrorBodyBytes, decided at the body's first byte once the status is known.
  enum class Mode { kUndecided, kSink, kBuffer, kErrorBody } mode_ = Mode::kUndecided;
  bool error_body_cut_ = false;
  std::optional<Error> failure_;
};

}  // namespace kcm::client::internal
