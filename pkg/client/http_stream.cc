// HttpStream: a response read as it arrives (a watch), on a handle and connection of its own,
// driven by the reading thread (transport.h).
#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "pkg/client/internal/answer.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/transport_impl.h"
#include "pkg/client/transport.h"

namespace kcm::client {

struct HttpStream::State {
  // A 2xx body's bytes wait in `pending` until Read() hands them over: what one
  // curl_multi_perform delivers, which libcurl's read loop bounds. The watch's frame scanner
  // bounds what it keeps of them.
  class PendingSink final : public BodySink {
   public:
    explicit PendingSink(std::string* pending) : pending_(pending) {}
    void Begin(std::string_view) override {}
    Status Write(std::string_view data) override {
      pending_->append(data);
      return Status();
    }

   private:
    std::string* pending_;
  };

  std::shared_ptr<Transport::Impl> impl;  // keeps the share alive while the handle uses it
  HttpRequest request;
  std::string body;  // request.body's bytes, which curl points into
  std::unique_ptr<internal::Handle> handle;
  internal::HeaderList headers;
  std::string pending;  // bytes received but not yet handed to Read()
  PendingSink sink{&pending};
  // Every byte of the answer lands here (the error answer's body, within its bound, too).
  std::optional<internal::Answer> answer;
  std::atomic<bool> canceled{false};
  std::atomic<int> status{0};
  bool added = false;
  bool done = false;
  // The last curl_multi_perform drained what the connection had (see Read): the next one waits
  // for the socket (or libcurl's own timer) first.
  bool drained = false;
  CURLcode result = CURLE_OK;

  ~State() {
    if (added) curl_multi_remove_handle(handle->multi.get(), handle->easy.get());
  }

  void UpdateStatus() {
    if (status.load() != 0) return;
    status.store(static_cast<int>(answer->HttpStatus()));
  }
};

std::unique_ptr<HttpStream> Transport::Stream(const HttpRequest& request) {
  auto state = std::make_unique<HttpStream::State>();
  state->impl = impl_;
  state->request = request;
  state->body = std::string(request.body);
  state->request.body = state->body;
  // A handle of the stream's own: a watch holds its connection for minutes.
  state->handle = impl_->NewHandle();
  if (state->handle) {
    CURL* easy = state->handle->easy.get();
    impl_->Configure(easy, &state->handle->proxy, state->request, state->headers);
    // No gzip for streams: libcurl 7.88 (Debian 12) fails a gzip-encoded protobuf watch of
    // kube-apiserver v1.37 with CURLE_WRITE_ERROR after some 500 kB (reproduced with the curl
    // tool: a streaming list of 50,000 pods, `--compressed`, exit 23; without it, or as JSON, the
    // same stream is read to the end). Watch events are small and mostly local; identity costs
    // bandwidth, not correctness.
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, nullptr);
    state->answer.emplace(easy, request.max_body_bytes, &state->sink, /*replayable=*/true,
                          internal::Answer::Kind::kStream);
    state->answer->Attach();
    state->added = curl_multi_add_handle(state->handle->multi.get(), easy) == CURLM_OK;
  }
  return std::make_unique<HttpStream>(HttpStream::Private{}, std::move(state));
}

HttpStream::HttpStream(Private, std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpStream::~HttpStream() = default;

Result<size_t> HttpStream::Read(std::string* out) {
  State& s = *state_;
  if (!s.added) return Error::Transport(TransportCause::kOther, "cannot start transfer");
  CURLM* multi = s.handle->multi.get();
  while (true) {
    if (s.canceled.load()) return size_t{0};
    if (!s.pending.empty()) {
      s.UpdateStatus();
      const size_t n = s.pending.size();
      out->append(s.pending);
      s.pending.clear();
      return n;
    }
    if (s.done) {
      if (!s.answer->Usable(s.result)) {
        return internal::TransferError(s.request, s.result, s.handle->errbuf,
                                       s.answer->TakeFailure());
      }
      return size_t{0};
    }
    if (s.drained) {
      // Wait before the next perform: bytes still in the socket end this poll at once, and bytes
      // a perform left inside OpenSSL (it reads while SSL_pending says there are some, up to its
      // read-loop limit, and then sets a zero timer) end it too. A perform straight after one
      // that delivered data mostly finds EAGAIN: a wasted recvfrom and pass of libcurl's state
      // machine per watch chunk. Cancel() wakes this poll (curl_multi_wakeup).
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
      s.drained = false;
      continue;  // Cancel() may have ended the wait
    }
    int running = 0;
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      return Error::Transport(TransportCause::kOther, "curl_multi_perform failed");
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        s.done = true;
        s.result = msg->data.result;
        s.UpdateStatus();
      }
    }
    s.drained = true;
  }
}

int HttpStream::status() const {
  return state_->status.load();
}

std::string HttpStream::retry_after() const {
  return state_->answer ? state_->answer->head().retry_after() : std::string();
}

std::string HttpStream::content_type() const {
  return state_->answer ? state_->answer->head().content_type() : std::string();
}

const std::string& HttpStream::error_body() const {
  static const std::string kNone;
  return state_->answer ? state_->answer->body() : kNone;
}

void HttpStream::Cancel() {
  state_->canceled.store(true);
  if (state_->handle) curl_multi_wakeup(state_->handle->multi.get());
}

bool HttpStream::canceled() const {
  return state_->canceled.load();
}

}  // namespace kcm::client
