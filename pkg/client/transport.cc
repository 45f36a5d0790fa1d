#include "pkg/client/transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <optional>

#include "pkg/client/internal/answer.h"
#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/transport_impl.h"
#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

bool ReadableFile(const std::string& path) {
  return std::ifstream(path).good();
}

// Each thread's handles for the round trips with a BodySink (streamed LISTs), which run on the
// caller's thread (the sink must not run on the loop), one per Transport. A worker thread sends one
// request at a time, so its handle (and the connection the handle keeps alive) is never contended
// and needs no pool lock. Connections are not put in the share: libcurl documents sharing its
// connection cache between concurrent threads as unsupported. An entry does not keep its
// Transport alive; the Transport frees its handles when it goes, and an entry whose Transport is
// gone is dropped unused.
class ThreadHandles {
 public:
  ~ThreadHandles() {
    for (Entry& e : entries_) {
      if (auto owner = e.owner.lock()) owner->Retire(e.handle);
    }
  }

  // The calling thread's handle for `impl`, made on first use; nullptr when libcurl cannot make
  // one.
  internal::Handle* For(const std::shared_ptr<Transport::Impl>& impl) {
    for (Entry& e : entries_) {
      if (!e.owner.owner_before(impl) && !impl.owner_before(e.owner)) return e.handle;
    }
    std::erase_if(entries_, [](const Entry& e) { return e.owner.expired(); });
    if (entries_.size() >= kMaxEntries) {
      if (auto owner = entries_.front().owner.lock()) owner->Retire(entries_.front().handle);
      entries_.erase(entries_.begin());
    }
    auto handle = impl->NewHandle();
    if (!handle) return nullptr;
    internal::Handle* h = impl->Register(std::move(handle));
    entries_.push_back({impl, h});
    return h;
  }

 private:
  // A thread uses one to three Transports (the API server's, and the delegated authn/authz
  // clients'); tests make many in turn.
  static constexpr std::size_t kMaxEntries = 8;
  struct Entry {
    std::weak_ptr<Transport::Impl> owner;
    internal::Handle* handle;
  };
  std::vector<Entry> entries_;
};

// The thread's handle for one request; a second request on the same thread while the first is
// in flight (a BodySink that sends one) gets a handle of its own for the time being.
class HandleLease {
 public:
  explicit HandleLease(const std::shared_ptr<Transport::Impl>& impl) {
    thread_local ThreadHandles cache;
    handle_ = cache.For(impl);
    if (handle_ != nullptr && handle_->busy) {
      own_ = impl->NewHandle();
      handle_ = own_.get();
    }
    if (handle_ != nullptr) handle_->busy = true;
  }
  ~HandleLease() {
    if (handle_ != nullptr) handle_->busy = false;
  }
  HandleLease(const HandleLease&) = delete;
  HandleLease& operator=(const HandleLease&) = delete;

  internal::Handle* get() const { return handle_; }

 private:
  std::unique_ptr<internal::Handle> own_;
  internal::Handle* handle_ = nullptr;
};

// Runs the transfer of `easy` (added to `multi`) to its end, or until `stop` is requested.
// Returns false when stopped.
bool Drive(CURLM* multi, const std::stop_token& stop, CURLcode* result) {
  int running = 1;
  while (true) {
    if (stop.stop_requested()) return false;
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      *result = CURLE_FAILED_INIT;
      return true;
    }
    if (running == 0) break;
    // Waits for the socket or libcurl's next timer, at most a second; a stop wakes it.
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  int queued = 0;
  *result = CURLE_OK;
  while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
    if (msg->msg == CURLMSG_DONE) *result = msg->data.result;
  }
  return true;
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
  impl->requests = internal::RequestMulti::Create(
      [impl = impl.get()](char* errbuf) { return impl->NewEasy(errbuf); });
  if (!impl->requests) return Error::Local("InvalidConfig", "cannot start the transport's loop");
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
  answer.BeginEmptyBody();  // a 2xx answer without a body still begins its sink
  resp.body = std::move(answer.body());
  EnsurePadding(resp.body);
  resp.retry_after = answer.head().retry_after();
  resp.content_type = answer.head().content_type();
  return resp;
}

Error Canceled() {
  return Error::Local(errors::reason::kCanceled, "request canceled");
}

// A round trip with a BodySink (a streamed LIST), driven on the caller's thread: the sink runs
// there, never on the loop.
Result<HttpResponse> RoundTripOnThread(const std::shared_ptr<Transport::Impl>& impl,
                                       const HttpRequest& request, const std::stop_token& stop) {
  HandleLease lease(impl);
  internal::Handle* h = lease.get();
  if (h == nullptr) return Error::Transport(TransportCause::kOther, "curl_easy_init failed");
  CURL* easy = h->easy.get();
  h->errbuf[0] = '\0';
  h->RetireUnaskedConnection();
  internal::Answer answer(easy, request.max_body_bytes, request.body_sink, Replayable(request));
  internal::HeaderList headers;
  impl->Configure(easy, &h->proxy, request, headers);
  answer.Attach();

  CURLcode rc = CURLE_OK;
  bool finished = false;
  if (curl_multi_add_handle(h->multi.get(), easy) != CURLM_OK) {
    rc = CURLE_FAILED_INIT;
    finished = true;
  } else {
    std::stop_callback wake(stop, [multi = h->multi.get()] { curl_multi_wakeup(multi); });
    finished = Drive(h->multi.get(), stop, &rc);
    if (curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &h->last) != CURLE_OK) {
      h->last = CURL_SOCKET_BAD;
    }
    // Mid-transfer (stopped), this closes the connection; after the end it stays cached.
    curl_multi_remove_handle(h->multi.get(), easy);
  }
  if (!finished) return Canceled();
  return Respond(request, answer, rc, h->errbuf);
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
  if (request.body_sink != nullptr) return RoundTripOnThread(impl_, request, stop);
  // This thread sleeps on the transfer's flag, which the loop raises once it removed the handle
  // from its multi.
  return Submit(request, std::move(stop), nullptr)->Wait();
}

}  // namespace kcm::client
