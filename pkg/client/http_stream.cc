// HttpStream: a response read as it arrives (a watch), a transfer of the Transport's streams multi
// on the loop whose body crosses to the reading thread in a byte channel (transport.h;
// docs/design/client-transport.md, "Byte channel and backpressure").
#include <curl/curl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "pkg/client/internal/answer.h"
#include "pkg/client/internal/byte_channel.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/event_loop.h"
#include "pkg/client/internal/transport_impl.h"
#include "pkg/client/transport.h"

namespace kcm::client {

struct HttpStream::State {
  std::shared_ptr<Transport::Impl> impl;  // keeps the multi and the share alive
  HttpRequest request;
  std::string body;  // request.body's bytes, which curl points into
  internal::RequestMulti* multi = nullptr;
  std::shared_ptr<internal::RequestTransfer> transfer;  // null when no handle could be made
  internal::HeaderList headers;
  // The 2xx body's bytes, from the loop to Read(); the watch's frame scanner bounds what it keeps
  // of them, the channel what it holds.
  internal::ByteChannel channel;
  // Every byte of the answer lands here (the error answer's body, within its bound, too). Read
  // on this side only once the transfer ended.
  std::optional<internal::Answer> answer;
  std::atomic<bool> canceled{false};
  std::atomic<int> status{0};
  // The reading thread's.
  std::string content_type;
  std::string retry_after;

  ~State() {
    if (!transfer) return;
    // The loop may still be writing into the channel and the answer: they go only after the
    // transfer's end.
    if (!transfer->done.IsSet()) multi->Cancel(transfer);
    transfer->done.Wait();
    multi->ReturnHandle(std::move(transfer->handle));
  }

  void NoteHead(const internal::ByteChannel::Head& head) {
    if (status.load() != 0) return;
    content_type = head.content_type;
    retry_after = head.retry_after;
    status.store(head.status);
  }
};

std::unique_ptr<HttpStream> Transport::Stream(const HttpRequest& request) {
  auto state = std::make_unique<HttpStream::State>();
  HttpStream::State& s = *state;
  s.impl = impl_;
  s.request = request;
  s.body = std::string(request.body);
  s.request.body = s.body;
  s.multi = impl_->streams.get();
  auto transfer = std::make_shared<internal::RequestTransfer>();
  transfer->handle = s.multi->TakeHandle();
  if (transfer->handle) {
    internal::PooledEasy& h = *transfer->handle;
    CURL* easy = h.easy.get();
    h.errbuf[0] = '\0';
    impl_->Configure(easy, &h.proxy, s.request, s.headers);
    // No gzip for streams: libcurl 7.88 (Debian 12) fails a gzip-encoded protobuf watch of
    // kube-apiserver v1.37 with CURLE_WRITE_ERROR after some 500 kB (reproduced with the curl
    // tool: a streaming list of 50,000 pods, `--compressed`, exit 23; without it, or as JSON, the
    // same stream is read to the end). Watch events are small and mostly local; identity costs
    // bandwidth, not correctness.
    impl_->SetEncoding(easy, /*stream=*/true);
    s.answer.emplace(easy, request.max_body_bytes, &s.channel, /*replayable=*/true,
                     internal::Answer::Kind::kStream);
    s.answer->Attach();
    transfer->channel = &s.channel;
    // Runs on the loop once the handle left the multi: the reader sees the end after the bytes.
    transfer->on_done = [channel = &s.channel](internal::RequestTransfer&) { channel->End(); };
    s.transfer = transfer;
    s.multi->Start(std::move(transfer));
  }
  return std::make_unique<HttpStream>(HttpStream::Private{}, std::move(state));
}

HttpStream::HttpStream(Private, std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpStream::~HttpStream() = default;

Result<size_t> HttpStream::Read(std::string* out) {
  State& s = *state_;
  if (!s.transfer) return Error::Transport(TransportCause::kOther, "cannot start transfer");
  if (s.canceled.load()) return size_t{0};
  const internal::ByteChannel::Taken taken = s.channel.Take(out);
  if (taken.resume) s.multi->Resume(s.transfer);
  if (taken.closed) return size_t{0};
  if (taken.bytes > 0) {
    if (s.status.load() == 0) s.NoteHead(s.channel.head());
    return taken.bytes;
  }
  // Ended: the loop is done with the answer (the channel's end follows the handle's removal).
  const internal::Answer& answer = *s.answer;
  s.NoteHead({.status = static_cast<int>(answer.HttpStatus()),
              .content_type = answer.head().content_type(),
              .retry_after = answer.head().retry_after()});
  if (s.transfer->canceled) return size_t{0};  // the Transport's multi closed under it
  if (!s.answer->Usable(s.transfer->result)) {
    return internal::TransferError(s.request, s.transfer->result, s.transfer->handle->errbuf,
                                   s.answer->TakeFailure());
  }
  return size_t{0};
}

int HttpStream::status() const {
  return state_->status.load();
}

std::string HttpStream::retry_after() const {
  return state_->retry_after;
}

std::string HttpStream::content_type() const {
  return state_->content_type;
}

const std::string& HttpStream::error_body() const {
  static const std::string kNone;
  return state_->answer ? state_->answer->body() : kNone;
}

void HttpStream::Cancel() {
  State& s = *state_;
  s.canceled.store(true);
  // At once: a Read blocked on the channel returns 0 now, not when the loop got to the cancel.
  s.channel.Close();
  if (s.transfer) s.multi->Cancel(s.transfer);
}

bool HttpStream::canceled() const {
  return state_->canceled.load();
}

}  // namespace kcm::client
