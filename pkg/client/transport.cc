#include "pkg/client/transport.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>

#include "pkg/client/json_padding.h"

namespace kcm::client {
namespace {

// curl_global_init is not thread-safe and must run once per process before any handle exists.
void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct MultiDeleter {
  void operator()(CURLM* m) const { curl_multi_cleanup(m); }
};
struct ShareDeleter {
  void operator()(CURLSH* s) const { curl_share_cleanup(s); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;
using MultiPtr = std::unique_ptr<CURLM, MultiDeleter>;
using SharePtr = std::unique_ptr<CURLSH, ShareDeleter>;

// Idle handles kept for reuse; each one holds its own live connection(s).
constexpr std::size_t kMaxIdleHandles = 32;

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && StartsWithNoCase(a, b);
}

// A request's header lines for CURLOPT_HTTPHEADER, all in one buffer with the list nodes pointing
// into it: libcurl only reads the list (data and next) during the transfer, and building it with
// curl_slist_append cost two allocations per header plus the joined string's, on every request.
// Filled in place (Build), since the nodes point into `text`; not copyable or movable.
class HeaderList {
 public:
  HeaderList() = default;
  HeaderList(const HeaderList&) = delete;
  HeaderList& operator=(const HeaderList&) = delete;

  // `body_sent`: libcurl sends a body (POSTFIELDS); without a Content-Type of the request's own it
  // would label it application/x-www-form-urlencoded, which client-go never sends (an empty POST
  // goes without one), so an empty "Content-Type:" line drops it.
  curl_slist* Build(const std::vector<std::pair<std::string, std::string>>& headers,
                    bool body_sent) {
    std::size_t size = 0;
    bool has_content_type = false;
    for (const auto& [name, value] : headers) {
      size += name.size() + value.size() + 3;
      has_content_type = has_content_type || EqualsNoCase(name, "Content-Type");
    }
    // No 100-continue round trip for large bodies; the API server answers directly.
    constexpr std::string_view kNoExpect = "Expect:";
    constexpr std::string_view kNoContentType = "Content-Type:";
    const bool drop_content_type = body_sent && !has_content_type;
    size += kNoExpect.size() + 1 + (drop_content_type ? kNoContentType.size() + 1 : 0);
    text_.clear();
    text_.reserve(size);  // never exceeded below: no append moves the bytes the nodes point at
    nodes_.clear();
    nodes_.reserve(headers.size() + 2);
    auto add = [&](auto&&... parts) {
      nodes_.push_back({text_.data() + text_.size(), nullptr});
      (text_.append(parts), ...);
      text_.push_back('\0');
    };
    for (const auto& [name, value] : headers) add(name, std::string_view(": "), value);
    add(kNoExpect);
    if (drop_content_type) add(kNoContentType);
    for (std::size_t i = 0; i + 1 < nodes_.size(); ++i) nodes_[i].next = &nodes_[i + 1];
    return nodes_.data();
  }

 private:
  std::string text_;
  std::vector<curl_slist> nodes_;
};

std::string TrimHeaderValue(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) {
    v.remove_suffix(1);
  }
  return std::string(v);
}

// What the header callback extracts. A new status line (redirect, 100-continue) starts over.
struct HeaderInfo {
  std::string retry_after;
  std::string content_type;
  curl_off_t content_length = -1;

  void Parse(std::string_view line) {
    if (StartsWithNoCase(line, "HTTP/")) {
      *this = HeaderInfo{};
    } else if (StartsWithNoCase(line, "retry-after:")) {
      retry_after = TrimHeaderValue(line.substr(12));
    } else if (StartsWithNoCase(line, "content-type:")) {
      content_type = TrimHeaderValue(line.substr(13));
    } else if (StartsWithNoCase(line, "content-length:")) {
      try {
        content_length = std::stoll(TrimHeaderValue(line.substr(15)));
      } catch (...) {
        content_length = -1;
      }
    }
  }
};

struct BufferedSink {
  std::string body;
  HeaderInfo headers;
  std::size_t max_body = 0;  // 0 = unlimited
  bool too_large = false;
  // A streamed answer: a 2xx body goes to `stream` (decided at its first byte, once the status
  // is known); anything else is buffered.
  BodySink* stream = nullptr;
  CURL* easy = nullptr;
  enum class Mode { kUndecided, kStream, kBuffer } mode = Mode::kUndecided;
  std::optional<Error> stream_error;

  bool Is2xx() const {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status >= 200 && status < 300;
  }
};

size_t BufferedWrite(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<BufferedSink*>(user);
  const size_t len = size * n;
  if (sink->stream != nullptr) {
    if (sink->mode == BufferedSink::Mode::kUndecided) {
      if (sink->Is2xx()) {
        sink->mode = BufferedSink::Mode::kStream;
        sink->stream->Begin(sink->headers.content_type);
      } else {
        sink->mode = BufferedSink::Mode::kBuffer;
      }
    }
    if (sink->mode == BufferedSink::Mode::kStream) {
      Status s = sink->stream->Write(std::string_view(data, len));
      if (s.ok()) return len;
      // Returning short makes libcurl fail the transfer (CURLE_WRITE_ERROR).
      sink->stream_error = s.error();
      return 0;
    }
  }
  if (sink->max_body > 0 && sink->body.size() + len > sink->max_body) {
    // Returning short makes libcurl fail the transfer with CURLE_WRITE_ERROR: the body is never
    // held past the limit.
    sink->too_large = true;
    return 0;
  }
  if (sink->body.empty() && sink->headers.content_length > 0 &&
      (sink->max_body == 0 ||
       static_cast<size_t>(sink->headers.content_length) <= sink->max_body)) {
    // Reserve once for the whole body plus the simdjson padding.
    sink->body.reserve(static_cast<size_t>(sink->headers.content_length) + kJsonPadding);
  }
  sink->body.append(data, len);
  return len;
}

size_t BufferedHeader(char* data, size_t size, size_t n, void* user) {
  static_cast<BufferedSink*>(user)->headers.Parse(std::string_view(data, size * n));
  return size * n;
}

Error TransportError(const HttpRequest& req, CURLcode code, const char* errbuf) {
  std::string message = req.method + " " + req.url + ": " + curl_easy_strerror(code);
  if (errbuf != nullptr && errbuf[0] != '\0') message += std::string(" (") + errbuf + ")";
  return Error::Transport(TransportCauseFor(code), std::move(message));
}

bool ReadableFile(const std::string& path) {
  return std::ifstream(path).good();
}

}  // namespace

TransportCause TransportCauseFor(int curl_code) {
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_OK:
      return TransportCause::kNone;
    case CURLE_COULDNT_CONNECT:
      return TransportCause::kConnectionRefused;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportCause::kDNS;
    case CURLE_OPERATION_TIMEDOUT:
      return TransportCause::kTimedOut;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TransportCause::kConnectionReset;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
      return TransportCause::kTLS;
    case CURLE_FILESIZE_EXCEEDED:
      return TransportCause::kTooLarge;
    default:
      return TransportCause::kOther;
  }
}

namespace {

// Dead-peer detection on every connection, idle or streaming a watch. client-go gets it from its
// HTTP/2 health check (http2.Transport ReadIdleTimeout 30 s: send a PING after 30 s without a
// frame; PingTimeout 15 s: close the connection when the PING is not answered). libcurl 7.88
// (Debian 12) can send h2 PINGs (CURLOPT_UPKEEP_INTERVAL_MS + curl_easy_upkeep) but only on idle
// pooled connections and never checks for the answer, so it cannot detect a dead peer. TCP
// keepalive with the same numbers does, in the kernel, for HTTP/1.1 too: the first probe after
// 30 s idle, and a connection whose probe is unanswered for 15 s is closed (the pending read then
// fails with cause kConnectionReset or kTimedOut). A live server that accepts and stays silent
// answers the probes; the request deadlines (stall limit, total timeout) cover that case.
constexpr long kKeepAliveIdleSeconds = 30;
constexpr long kKeepAliveIntervalSeconds = 15;
constexpr int kKeepAliveProbes = 1;

int SetKeepAliveCount(void*, curl_socket_t fd, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) {
    // libcurl 7.88 has no CURLOPT_TCP_KEEPCNT (added in 8.9); set it on the socket.
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof kKeepAliveProbes);
  }
  return CURL_SOCKOPT_OK;
}

// libcurl's OpenSSL backend sets SSL_MODE_RELEASE_BUFFERS on each connection's SSL_CTX, so OpenSSL
// frees a connection's read and write buffers (about 17 kB each) whenever they drain and allocates
// them again for the next record: one large malloc/free pair per TLS record each way, every one of
// them consolidating the heap's fast bins (2-3 % of the controller manager's CPU at scale). Our
// connections are few (one per pooled handle and per watch) and busy, so each keeps its buffers.
// libcurl calls this for every new connection, after its own SSL_CTX settings and before the
// connection's SSL object is made from that SSL_CTX.
CURLcode KeepTlsBuffers(CURL*, void* ssl_ctx, void*) {
  SSL_CTX_clear_mode(static_cast<SSL_CTX*>(ssl_ctx), SSL_MODE_RELEASE_BUFFERS);
  return CURLE_OK;
}

// The callback above receives an OpenSSL SSL_CTX only from libcurl's OpenSSL backend.
bool CurlUsesOpenSsl() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  return info != nullptr && info->ssl_version != nullptr &&
         std::string_view(info->ssl_version).starts_with("OpenSSL/");
}

}  // namespace

struct Transport::Impl {
  explicit Impl(const RestConfig& c) : config(c), openssl(CurlUsesOpenSsl()) {}

  RestConfig config;
  const bool openssl;
  // Declared before `share` so the share's lock callbacks outlive it, and `share` before `idle`
  // so every easy handle is cleaned up before the share it uses.
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  SharePtr share;
  std::mutex pool_mu;
  std::vector<EasyPtr> idle;

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->locks[data].unlock();
  }

  // A pooled handle keeps the options of its last request: Acquire does not curl_easy_reset it
  // (that would free and re-copy every option string and the TLS settings on each request, about a
  // tenth of a request's CPU); Configure sets every per-request option again instead.
  EasyPtr Acquire() {
    {
      std::lock_guard lock(pool_mu);
      if (!idle.empty()) {
        EasyPtr h = std::move(idle.back());
        idle.pop_back();
        return h;
      }
    }
    return NewHandle();
  }

  void Release(EasyPtr h) {
    std::lock_guard lock(pool_mu);
    if (idle.size() < kMaxIdleHandles) idle.push_back(std::move(h));
  }

  // A handle with the options that are the same for every request: connection, TLS, HTTP version.
  EasyPtr NewHandle() const {
    EasyPtr handle(curl_easy_init());
    CURL* h = handle.get();
    if (h == nullptr) return handle;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // we run on many threads
    curl_easy_setopt(h, CURLOPT_SHARE, share.get());
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, kKeepAliveIdleSeconds);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, kKeepAliveIntervalSeconds);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, &SetKeepAliveCount);
    if (openssl) curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &KeepTlsBuffers);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                     config.enable_http2 ? static_cast<long>(CURL_HTTP_VERSION_2TLS)
                                         : static_cast<long>(CURL_HTTP_VERSION_1_1));
    if (config.insecure) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!config.ca_data.empty()) {
      curl_blob blob{const_cast<char*>(config.ca_data.data()), config.ca_data.size(),
                     CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    } else if (!config.ca_file.empty()) {
      curl_easy_setopt(h, CURLOPT_CAINFO, config.ca_file.c_str());
    }
    if (!config.cert_data.empty()) {
      curl_blob blob{const_cast<char*>(config.cert_data.data()), config.cert_data.size(),
                     CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!config.cert_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLCERT, config.cert_file.c_str());
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (!config.key_data.empty()) {
      curl_blob blob{const_cast<char*>(config.key_data.data()), config.key_data.size(),
                     CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!config.key_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLKEY, config.key_file.c_str());
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    return handle;
  }

  // The options of one request. Every one is set on every request (to its "none" value where the
  // request has none), because a pooled handle still holds its previous request's options; the
  // caller adds the write/header callbacks.
  void Configure(CURL* h, const HttpRequest& req, char* errbuf, HeaderList& headers) const {
    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    // 0 = libcurl's default (300 s).
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::max<long>(0, req.connect_timeout.count())));
    // libcurl checks the transfer speed once a second (averaged over the last few seconds) and
    // fails with CURLE_OPERATION_TIMEDOUT once it stayed below the limit for stall_timeout, also
    // while no answer byte has come yet. LOW_SPEED_TIME 0 = no such check.
    const bool stall = req.stall_timeout.count() > 0;
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT,
                     stall ? std::max(1L, req.stall_bytes_per_second) : 0L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                     stall ? static_cast<long>(req.stall_timeout.count()) : 0L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, config.disable_compression ? nullptr : "gzip");
    // 0 = no total timeout.
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::max<long>(0, req.timeout.count())));

    const bool send_body =
        !req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    if (send_body) {
      // POSTFIELDS makes it a POST; CUSTOMREQUEST names the real verb. Not copied: the request
      // outlives the transfer.
      // Never a null pointer (an empty view's data() may be): with none, libcurl would read the
      // body from its read callback, stdin by default.
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.empty() ? "" : req.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                       req.method == "POST" ? nullptr : req.method.c_str());
    } else {
      // HTTPGET drops the previous request's body (a GET-type request sends none); a DELETE
      // without a body is a GET renamed.
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                       req.method == "GET" ? nullptr : req.method.c_str());
    }

    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.Build(req.headers, send_body));
  }
};

Result<std::shared_ptr<Transport>> Transport::Create(const RestConfig& config) {
  EnsureCurlGlobalInit();
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
  // DNS and TLS sessions are shared across handles; connections stay per handle because
  // libcurl does not multiplex HTTP/2 across threads through a share.
  curl_share_setopt(impl->share.get(), CURLSHOPT_LOCKFUNC, &Impl::Lock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_UNLOCKFUNC, &Impl::Unlock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_USERDATA, impl.get());
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  return std::make_shared<Transport>(Private{}, std::move(impl));
}

Transport::Transport(Private, std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

namespace {

int AbortWhenStopped(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::stop_token*>(user)->stop_requested() ? 1 : 0;
}

}  // namespace

Result<HttpResponse> Transport::RoundTrip(const HttpRequest& request, std::stop_token stop) {
  EasyPtr h = impl_->Acquire();
  if (!h) return Error::Transport(TransportCause::kOther, "curl_easy_init failed");
  char errbuf[CURL_ERROR_SIZE] = {0};
  BufferedSink sink;
  sink.max_body = request.max_body_bytes;
  sink.stream = request.body_sink;
  sink.easy = h.get();
  HeaderList headers;
  impl_->Configure(h.get(), request, errbuf, headers);
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &BufferedWrite);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, &BufferedHeader);
  curl_easy_setopt(h.get(), CURLOPT_HEADERDATA, &sink);
  // Pooled handles keep options: set the progress hook (or its absence) on every request.
  const bool cancellable = stop.stop_possible();
  curl_easy_setopt(h.get(), CURLOPT_NOPROGRESS, cancellable ? 0L : 1L);
  curl_easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, cancellable ? &AbortWhenStopped : nullptr);
  curl_easy_setopt(h.get(), CURLOPT_XFERINFODATA, cancellable ? &stop : nullptr);
  const CURLcode rc = curl_easy_perform(h.get());
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    return Error::Local(errors::reason::kCanceled, "request canceled");
  }
  if (sink.stream_error) {
    // The body could not be taken (a decode error): the connection is mid-answer, drop it.
    return *sink.stream_error;
  }
  if (sink.too_large) {
    return Error::Transport(TransportCause::kTooLarge,
                            request.method + " " + request.url + ": response body over " +
                                std::to_string(request.max_body_bytes) + " bytes");
  }
  if (rc != CURLE_OK) {
    // A handle whose transfer failed may hold a broken connection; let it go.
    return TransportError(request, rc, errbuf);
  }
  long status = 0;
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  impl_->Release(std::move(h));
  HttpResponse resp;
  resp.status = static_cast<int>(status);
  if (sink.stream != nullptr && sink.mode == BufferedSink::Mode::kUndecided && status >= 200 &&
      status < 300) {
    sink.stream->Begin(sink.headers.content_type);  // a 2xx answer without a body
  }
  resp.body = std::move(sink.body);
  EnsurePadding(resp.body);
  resp.retry_after = std::move(sink.headers.retry_after);
  resp.content_type = std::move(sink.headers.content_type);
  return resp;
}

// --- streaming -------------------------------------------------------------------------------

struct HttpStream::State {
  std::shared_ptr<Transport::Impl> impl;  // keeps the share alive while the handle uses it
  HttpRequest request;
  std::string body;  // request.body's bytes, which curl points into
  EasyPtr easy;
  MultiPtr multi;
  HeaderList headers;
  char errbuf[CURL_ERROR_SIZE] = {0};
  HeaderInfo header_info;
  std::string pending;  // bytes received but not yet handed to Read()
  std::atomic<bool> canceled{false};
  std::atomic<int> status{0};
  bool added = false;
  bool done = false;
  // The last curl_multi_perform drained what the connection had (see Read): the next one waits
  // for the socket (or libcurl's own timer) first.
  bool drained = false;
  CURLcode result = CURLE_OK;

  ~State() {
    if (added) curl_multi_remove_handle(multi.get(), easy.get());
    easy.reset();  // before the multi it was part of
    multi.reset();
  }

  static size_t Write(char* data, size_t size, size_t n, void* user) {
    auto* s = static_cast<State*>(user);
    s->pending.append(data, size * n);
    return size * n;
  }
  static size_t Header(char* data, size_t size, size_t n, void* user) {
    static_cast<State*>(user)->header_info.Parse(std::string_view(data, size * n));
    return size * n;
  }

  void UpdateStatus() {
    if (status.load() != 0) return;
    long code = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
    status.store(static_cast<int>(code));
  }
};

std::unique_ptr<HttpStream> Transport::Stream(const HttpRequest& request) {
  auto state = std::make_unique<HttpStream::State>();
  state->impl = impl_;
  state->request = request;
  state->body = std::string(request.body);
  state->request.body = state->body;
  state->easy = impl_->NewHandle();
  state->multi.reset(curl_multi_init());
  if (state->easy && state->multi) {
    impl_->Configure(state->easy.get(), state->request, state->errbuf, state->headers);
    // No gzip for streams: libcurl 7.88 (Debian 12) fails a gzip-encoded protobuf watch of
    // kube-apiserver v1.37 with CURLE_WRITE_ERROR after some 500 kB (reproduced with the curl
    // tool: a streaming list of 50,000 pods, `--compressed`, exit 23; without it, or as JSON, the
    // same stream is read to the end). Watch events are small and mostly local; identity costs
    // bandwidth, not correctness.
    curl_easy_setopt(state->easy.get(), CURLOPT_ACCEPT_ENCODING, nullptr);
    curl_easy_setopt(state->easy.get(), CURLOPT_WRITEFUNCTION, &HttpStream::State::Write);
    curl_easy_setopt(state->easy.get(), CURLOPT_WRITEDATA, state.get());
    curl_easy_setopt(state->easy.get(), CURLOPT_HEADERFUNCTION, &HttpStream::State::Header);
    curl_easy_setopt(state->easy.get(), CURLOPT_HEADERDATA, state.get());
    state->added = curl_multi_add_handle(state->multi.get(), state->easy.get()) == CURLM_OK;
  }
  return std::make_unique<HttpStream>(HttpStream::Private{}, std::move(state));
}

HttpStream::HttpStream(Private, std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpStream::~HttpStream() = default;

Result<size_t> HttpStream::Read(std::string* out) {
  State& s = *state_;
  if (!s.added) return Error::Transport(TransportCause::kOther, "cannot start transfer");
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
      if (s.result != CURLE_OK) return TransportError(s.request, s.result, s.errbuf);
      return size_t{0};
    }
    if (s.drained) {
      // Wait before the next perform: bytes still in the socket end this poll at once, and bytes
      // a perform left inside OpenSSL or the HTTP/2 layer (it reads while SSL_pending says there
      // are some, up to its read-loop limit, and then sets a zero timer) end it too. A perform
      // straight after one that delivered data mostly finds EAGAIN: a wasted recvfrom and pass of
      // libcurl's state machine per watch chunk. Cancel() wakes this poll (curl_multi_wakeup).
      curl_multi_poll(s.multi.get(), nullptr, 0, 1000, nullptr);
      s.drained = false;
      continue;  // Cancel() may have ended the wait
    }
    int running = 0;
    if (curl_multi_perform(s.multi.get(), &running) != CURLM_OK) {
      return Error::Transport(TransportCause::kOther, "curl_multi_perform failed");
    }
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(s.multi.get(), &queued)) {
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
  return state_->header_info.retry_after;
}

std::string HttpStream::content_type() const {
  return state_->header_info.content_type;
}

void HttpStream::Cancel() {
  state_->canceled.store(true);
  if (state_->multi) curl_multi_wakeup(state_->multi.get());
}

bool HttpStream::canceled() const {
  return state_->canceled.load();
}

}  // namespace kcm::client
