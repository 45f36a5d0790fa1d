#include "pkg/client/transport.h"

#include <curl/curl.h>

#include <fstream>
#include <optional>

#include "pkg/client/internal/answer.h"
#include "pkg/client/internal/byte_channel.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/transport_impl.h"
#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

bool ReadableFile(const std::string& path) {
  return std::ifstream(path).good();
}

}  // namespace

Result<std::shared_ptr<Transport>> Transport::Create(const RestConfig& config) {
  internal::EnsureCurlGlobalInit();
  const std::pair<const std::string*, const char*> files[] = {
      {&config.ca_file, "certificate-authority"},
      {&config.cert_file, "client-certificate"},
      {&config.key_file, "client-key"}};
  for (const auto& [path, field] : files) {
    if (!path->empty() && !ReadableFile(*path)) {
      return Error::Local("InvalidConfig", std::string("cannot read ") + field + " file " + *path);
    }
  }
  if (config.cert_file.empty() && config.cert_data.empty() &&
      !(config.key_file.empty() && config.key_data.empty())) {
    return Error::Local("InvalidConfig", "client key given without a client certificate");
  }
  auto impl = std::make_shared<Impl>(config);
  impl->share.reset(curl_share_init());
  if (!impl->share) return Error::Local("InvalidConfig", "curl_share_init failed");
  curl_share_setopt(impl->share.get(), CURLSHOPT_LOCKFUNC, &Impl::Lock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_UNLOCKFUNC, &Impl::Unlock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_USERDATA, impl.get());
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  auto new_easy = [impl = impl.get()](char* errbuf) { return impl->NewEasy(errbuf); };
  impl->requests = internal::RequestMulti::Create(new_easy);
  impl->streams = internal::RequestMulti::Create(new_easy, internal::RequestMulti::kUncapped);
  if (!impl->requests || !impl->streams) {
    return Error::Local("InvalidConfig", "cannot start the transport's loop");
  }
  return std::make_shared<Transport>(Private{}, std::move(impl));
}

Transport::Transport(Private, std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

namespace {

bool Replayable(const HttpRequest& request) {
  return request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS" ||
         request.method == "TRACE";
}

// The answer of a transfer that ended with `rc`, or its error.
Result<HttpResponse> Respond(const HttpRequest& request, internal::Answer& answer, CURLcode rc,
                             const char* errbuf) {
  if (!answer.Usable(rc)) {
    return internal::TransferError(request, rc, errbuf, answer.TakeFailure());
  }
  HttpResponse resp;
  resp.status = static_cast<int>(answer.HttpStatus());
  resp.body = std::move(answer.body());
  EnsurePadding(resp.body);
  resp.retry_after = answer.head().retry_after();
  resp.content_type = answer.head().content_type();
  return resp;
}

Error Canceled() {
  return Error::Local(errors::reason::kCanceled, "request canceled");
}

// A round trip with a BodySink (a streamed LIST): the transfer runs on the streams multi, its
// body crosses to this thread in a byte channel, and the sink is fed here, never on the loop
// (docs/design/client-transport.md, "Byte channel and backpressure"). A sink slower than the
// server pauses the transfer at the channel's bound.
Result<HttpResponse> RoundTripStreamed(const std::shared_ptr<Transport::Impl>& impl,
                                       const HttpRequest& request, const std::stop_token& stop) {
  if (stop.stop_requested()) return Canceled();
  internal::RequestMulti& multi = *impl->streams;
  auto transfer = std::make_shared<internal::RequestTransfer>();
  transfer->handle = multi.TakeHandle();
  if (!transfer->handle) return Error::Transport(TransportCause::kOther, "curl_easy_init failed");
  internal::PooledEasy& h = *transfer->handle;
  CURL* easy = h.easy.get();
  h.errbuf[0] = '\0';
  internal::ByteChannel channel;
  internal::Answer answer(easy, request.max_body_bytes, &channel, Replayable(request));
  internal::HeaderList headers;
  impl->Configure(easy, &h.proxy, request, headers);
  impl->SetEncoding(easy, /*stream=*/false);
  answer.Attach();
  transfer->channel = &channel;
  transfer->on_done = [&channel](internal::RequestTransfer&) { channel.End(); };
  multi.Start(transfer);
  // Whichever way this returns, the loop is done with the channel, the answer and the header
  // list before they go: a transfer still running is canceled and its end waited for.
  struct EndFirst {
    internal::RequestMulti& multi;
    std::shared_ptr<internal::RequestTransfer>& transfer;
    ~EndFirst() {
      if (!transfer->done.IsSet()) multi.Cancel(transfer);
      transfer->done.Wait();
      multi.ReturnHandle(std::move(transfer->handle));
    }
  } end_first{multi, transfer};
  // A stop wakes this thread at once (the channel closes) and posts the cancel.
  std::stop_callback on_stop(stop, [&] {
    channel.Close();
    multi.Cancel(transfer);
  });

  bool begun = false;
  std::string chunk;
  while (true) {
    chunk.clear();
    const internal::ByteChannel::Taken taken = channel.Take(&chunk);
    if (taken.resume) multi.Resume(transfer);
    if (taken.closed) return Canceled();
    if (taken.ended) break;
    if (!begun) {
      request.body_sink->Begin(channel.head().content_type);
      begun = true;
    }
    // The sink's error ends the transfer (EndFirst cancels it) and is what RoundTrip returns.
    if (Status s = request.body_sink->Write(chunk); !s.ok()) return s.error();
  }
  if (transfer->canceled) return Canceled();
  Result<HttpResponse> resp = Respond(request, answer, transfer->result, h.errbuf);
  // A 2xx answer without a body still begins its sink.
  if (resp.ok() && !begun && resp->status >= 200 && resp->status < 300) {
    request.body_sink->Begin(resp->content_type);
  }
  return resp;
}

}  // namespace

// A submitted request: its handle's transfer, the answer and header list the loop writes into
// and reads, and the stop's cancel. Lives on the heap, so the pointers libcurl holds stay valid.
struct PendingRoundTrip::State {
  // Posts the transfer's cancel when the caller's stop is requested.
  struct CancelOnStop {
    internal::RequestMulti* multi;
    std::shared_ptr<internal::RequestTransfer> transfer;
    void operator()() const { multi->Cancel(transfer); }
  };

  const HttpRequest* request = nullptr;
  internal::RequestMulti* multi = nullptr;
  std::shared_ptr<internal::RequestTransfer> transfer;
  std::optional<internal::Answer> answer;
  internal::HeaderList headers;
  std::optional<std::stop_callback<CancelOnStop>> cancel;
  // Set when the request never reached the loop (canceled before, or no handle to be had).
  std::optional<Error> early;
  bool waited = false;
};

PendingRoundTrip::PendingRoundTrip(Private, std::unique_ptr<State> state)
    : state_(std::move(state)) {}

PendingRoundTrip::~PendingRoundTrip() {
  State& s = *state_;
  if (s.waited || !s.transfer) return;
  s.cancel.reset();
  if (!s.transfer->done.IsSet()) s.multi->Cancel(s.transfer);
  s.transfer->done.Wait();
  s.multi->ReturnHandle(std::move(s.transfer->handle));
}

Result<HttpResponse> PendingRoundTrip::Wait() {
  State& s = *state_;
  s.waited = true;
  if (s.early) return *s.early;
  s.transfer->done.Wait();
  // Unregistered only now: the loop may still be running the transfer until `done`.
  s.cancel.reset();
  internal::PooledEasy& h = *s.transfer->handle;
  Result<HttpResponse> result = s.transfer->canceled
                                    ? Result<HttpResponse>(Canceled())
                                    : Respond(*s.request, *s.answer, s.transfer->result, h.errbuf);
  s.multi->ReturnHandle(std::move(s.transfer->handle));
  return result;
}

std::unique_ptr<PendingRoundTrip> Transport::Submit(const HttpRequest& request,
                                                    std::stop_token stop,
                                                    std::function<void()> on_done) {
  auto state = std::make_unique<PendingRoundTrip::State>();
  state->request = &request;
  auto early = [&](Error e) {
    state->early = std::move(e);
    if (on_done) on_done();
    return std::make_unique<PendingRoundTrip>(PendingRoundTrip::Private{}, std::move(state));
  };
  if (request.body_sink != nullptr) {
    return early(Error::Local("InvalidRequest", "a BodySink is fed on its caller's thread"));
  }
  if (stop.stop_requested()) return early(Canceled());
  internal::RequestMulti& multi = *impl_->requests;
  auto transfer = std::make_shared<internal::RequestTransfer>();
  transfer->handle = multi.TakeHandle();
  if (!transfer->handle) {
    return early(Error::Transport(TransportCause::kOther, "curl_easy_init failed"));
  }
  internal::PooledEasy& h = *transfer->handle;
  CURL* easy = h.easy.get();
  h.errbuf[0] = '\0';
  state->answer.emplace(easy, request.max_body_bytes, nullptr, Replayable(request));
  impl_->Configure(easy, &h.proxy, request, state->headers);
  state->answer->Attach();
  if (on_done) {
    transfer->on_done = [on_done = std::move(on_done)](internal::RequestTransfer&) { on_done(); };
  }
  state->multi = &multi;
  state->transfer = transfer;
  // The loop runs the transfer (its callbacks write into the answer). Registered after Start, a
  // stop's cancel is always posted after the start.
  multi.Start(transfer);
  state->cancel.emplace(stop, PendingRoundTrip::State::CancelOnStop{&multi, std::move(transfer)});
  return std::make_unique<PendingRoundTrip>(PendingRoundTrip::Private{}, std::move(state));
}

Result<HttpResponse> Transport::RoundTrip(const HttpRequest& request, std::stop_token stop) {
  if (request.body_sink != nullptr) return RoundTripStreamed(impl_, request, stop);
  // This thread sleeps on the transfer's flag, which the loop raises once it removed the handle
  // from its multi.
  return Submit(request, std::move(stop), nullptr)->Wait();
}

}  // namespace kcm::client
