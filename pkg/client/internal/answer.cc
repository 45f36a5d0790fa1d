#include "pkg/client/internal/answer.h"

#include <algorithm>
#include <string_view>

#include "pkg/client/json_padding.h"

namespace kcm::client::internal {

Answer::Answer(CURL* easy, std::size_t max_body, ByteChannel* channel, bool replayable, Kind kind)
    : easy_(easy), max_body_(max_body), channel_(channel), replayable_(replayable), kind_(kind) {}

void Answer::Attach() {
  curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &Answer::OnHeader);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &Answer::OnBody);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy_, CURLOPT_PREREQFUNCTION, &Answer::OnSend);
  curl_easy_setopt(easy_, CURLOPT_PREREQDATA, this);
}

bool Answer::Usable(CURLcode rc) const {
  if (failure_) return false;
  return rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && error_body_cut_);
}

long Answer::HttpStatus() const {
  long status = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

// libcurl sends a request once more on a new connection when a reused one closes before any
// answer byte; net/http resends only what is safe (persistConn.shouldRetryRequest: a replayable
// method). Called before each send: a second send of a create, update or delete, which may have
// reached the server, is refused, and the caller decides, as with net/http.
int Answer::OnSend(void* user, char*, char*, int, int) {
  auto* a = static_cast<Answer*>(user);
  if (++a->sends_ > 1 && !a->replayable_) {
    a->failure_ = Error::Transport(TransportCause::kConnectionReset,
                                   "connection closed before an answer; not sent again (the "
                                   "server may have acted on it)");
    return CURL_PREREQFUNC_ABORT;
  }
  return CURL_PREREQFUNC_OK;
}

size_t Answer::OnHeader(char* data, size_t, size_t n, void* user) {
  auto* a = static_cast<Answer*>(user);
  if (Status s = a->head_.Add(std::string_view(data, n)); !s.ok()) {
    a->failure_ = s.error();
    return 0;  // a short count fails the transfer
  }
  return n;
}

size_t Answer::OnBody(char* data, size_t, size_t n, void* user) {
  return static_cast<Answer*>(user)->Body(data, n);
}

size_t Answer::Body(const char* data, size_t n) {
  if (mode_ == Mode::kUndecided) {
    const long status = HttpStatus();
    const auto length = head_.content_length();
    if (status < 200 || status >= 300) {
      mode_ = Mode::kErrorBody;
      body_.reserve(static_cast<std::size_t>(
                        std::min<std::uint64_t>(length.value_or(0), kMaxErrorBodyBytes)) +
                    kJsonPadding);
    } else if (length && *length > max_body_) {
      failure_ = TooLarge();  // refused before the first byte is kept
      return 0;
    } else if (channel_ != nullptr) {
      mode_ = Mode::kSink;
      channel_->Begin({.status = static_cast<int>(status),
                       .content_type = head_.content_type(),
                       .retry_after = head_.retry_after()});
    } else {
      mode_ = Mode::kBuffer;
      if (length) body_.reserve(static_cast<std::size_t>(*length) + kJsonPadding);
    }
  }
  // Counted as delivered, i.e. inflated: a gzip bomb stops here, at the request's limit.
  const bool counted = mode_ != Mode::kErrorBody && kind_ == Kind::kRoundTrip;
  if (counted && delivered_ + n > max_body_) {
    failure_ = TooLarge();
    return 0;
  }
  switch (mode_) {
    case Mode::kSink:
      // A full channel pauses the transfer: libcurl keeps these bytes and offers them again once
      // the reader took what the channel holds (they are counted then).
      if (!channel_->Offer(std::string_view(data, n))) return CURL_WRITEFUNC_PAUSE;
      if (counted) delivered_ += n;
      return n;
    case Mode::kErrorBody:
      // What follows the first kMaxErrorBodyBytes is not read: the short count stops the
      // transfer and libcurl closes the connection instead of draining it.
      if (body_.size() + n > kMaxErrorBodyBytes) {
        body_.append(data, kMaxErrorBodyBytes - body_.size());
        error_body_cut_ = true;
        return 0;
      }
      body_.append(data, n);
      return n;
    default:
      if (counted) delivered_ += n;
      body_.append(data, n);
      return n;
  }
}

Error Answer::TooLarge() const {
  return Error::Transport(TransportCause::kTooLarge,
                          "response body over " + std::to_string(max_body_) + " bytes");
}

}  // namespace kcm::client::internal
