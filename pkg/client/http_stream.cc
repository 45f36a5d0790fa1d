// HttpStream: a response read as it arrives (a watch), on a handle and connection of its own,
// driven by the reading thread (transport.h).
#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "pkg/client/answer_head.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/transport_impl.h"
#include "pkg/client/transport.h"

namespace kcm::client {

struct HttpStream::State {
  std::shared_ptr<Transport::Impl> impl;  // keeps the share alive while the handle uses it
  HttpRequest request;
  std::string body;  // request.body's bytes, which curl points into
  std::unique_ptr<internal::Handle> handle;
  internal::HeaderList headers;
  AnswerHead head;
  std::optional<Error> failure;  // a head bound the callback enforced
  std::string pending;           // bytes received but not yet handed to Read()
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

  static size_t Write(char* data, size_t, size_t n, void* user) {
    static_cast<State*>(user)->pending.append(data, n);
    return n;
  }
  static size_t Header(char* data, size_t, size_t n, void* user) {
    auto* s = static_cast<State*>(user);
    if (Status st = s->head.Add(std::string_view(data, n)); !st.ok()) {
      s->failure = st.error();
      return 0;
    }
    return n;
  }

  void UpdateStatus() {
    if (status.load() != 0) return;
    long code = 0;
    curl_easy_getinfo(handle->easy.get(), CURLINFO_RESPONSE_CODE, &code);
    status.store(static_cast<int>(code));
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
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &HttpStream::State::Write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, state.get());
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HttpStream::State::Header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, state.get());
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
      if (s.result != CURLE_OK || s.failure) {
        return internal::TransferError(s.request, s.result, s.handle->errbuf, s.failure);
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
  return state_->head.retry_after();
}

std::string HttpStream::content_type() const {
  return state_->head.content_type();
}

void HttpStream::Cancel() {
  state_->canceled.store(true);
  if (state_->handle) curl_multi_wakeup(state_->handle->multi.get());
}

bool HttpStream::canceled() const {
  return state_->canceled.load();
}

}  // namespace kcm::client
