#include "pkg/client/transport.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>

#include "pkg/client/answer_head.h"
#include "pkg/client/json_padding.h"
#include "pkg/client/proxy_environment.h"
#include "pkg/util/strings.h"

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

TransportCause CauseOf(CURLcode code) {
  switch (code) {
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

// Dead-peer detection on every connection, idle or streaming a watch. client-go gets it from its
// HTTP/2 health check (http2.Transport ReadIdleTimeout 30 s: send a PING after 30 s without a
// frame; PingTimeout 15 s: close the connection when the PING is not answered). TCP keepalive
// with the same numbers does it in the kernel, for HTTP/1.1 too: the first probe after 30 s idle,
// and a connection whose probe is unanswered for 15 s is closed (the pending read then fails with
// cause kConnectionReset or kTimedOut). A live server that accepts and stays silent answers the
// probes; the request deadlines (stall limit, total timeout) cover that case.
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
// them again for the next record: a large malloc/free pair per TLS record each way. Our
// connections are few (one per thread that sends requests, one per watch) and busy, so each keeps
// its buffers. libcurl calls this for every new connection, before the connection's SSL object is
// made from that SSL_CTX.
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
      has_content_type = has_content_type || EqualsIgnoreCase(name, "Content-Type");
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

// What the callbacks of one buffered request gather, and the bounds they enforce.
struct Answer {
  AnswerHead head;
  std::string body;
  std::size_t max_body = 0;
  // A 2xx body goes to `sink` when set (decided at its first byte, once the status is known);
  // anything else is buffered.
  BodySink* sink = nullptr;
  CURL* easy = nullptr;
  enum class Mode { kUndecided, kSink, kBuffer } mode = Mode::kUndecided;
  // Why a callback stopped the transfer (a bound, the sink's error, a refused resend): libcurl
  // then reports CURLE_WRITE_ERROR or CURLE_ABORTED_BY_CALLBACK, and this is returned instead.
  std::optional<Error> failure;
  // Whether the request may be sent again after a reused connection closed before any answer
  // byte (net/http's Request.isReplayable), and how often it was sent.
  bool replayable = true;
  int sends = 0;

  // libcurl sends a request once more on a new connection when a reused one closes before any
  // answer byte; net/http resends only what is safe (persistConn.shouldRetryRequest: a
  // replayable method). Called before each send: a second send of a create, update or delete,
  // which may have reached the server, is refused, and the caller decides, as with net/http.
  static int OnSend(void* user, char*, char*, int, int) {
    auto* a = static_cast<Answer*>(user);
    if (++a->sends > 1 && !a->replayable) {
      a->failure = Error::Transport(TransportCause::kConnectionReset,
                                    "connection closed before an answer; not sent again (the "
                                    "server may have acted on it)");
      return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
  }

  long HttpStatus() const {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    return status;
  }

  static size_t OnHeader(char* data, size_t, size_t n, void* user) {
    auto* a = static_cast<Answer*>(user);
    if (Status s = a->head.Add(std::string_view(data, n)); !s.ok()) {
      a->failure = s.error();
      return 0;  // a short count fails the transfer
    }
    return n;
  }

  static size_t OnBody(char* data, size_t, size_t n, void* user) {
    auto* a = static_cast<Answer*>(user);
    if (a->mode == Mode::kUndecided) {
      const long status = a->HttpStatus();
      a->mode = a->sink != nullptr && status >= 200 && status < 300 ? Mode::kSink : Mode::kBuffer;
      if (a->mode == Mode::kSink) {
        a->sink->Begin(a->head.content_type());
      } else if (auto length = a->head.content_length(); length && *length > a->max_body) {
        a->failure = a->TooLarge();  // refused before the first byte is kept
        return 0;
      } else if (length) {
        a->body.reserve(static_cast<std::size_t>(*length) + kJsonPadding);
      }
    }
    if (a->mode == Mode::kSink) {
      Status s = a->sink->Write(std::string_view(data, n));
      if (s.ok()) return n;
      a->failure = s.error();
      return 0;
    }
    // Counted as delivered, i.e. inflated: a gzip bomb stops here, at the request's limit.
    if (a->body.size() + n > a->max_body) {
      a->failure = a->TooLarge();
      return 0;
    }
    a->body.append(data, n);
    return n;
  }

  Error TooLarge() const {
    return Error::Transport(TransportCause::kTooLarge,
                            "response body over " + std::to_string(max_body) + " bytes");
  }
};

// The error of a transfer that did not end in a usable answer: a callback's own reason wins over
// libcurl's CURLE_WRITE_ERROR, and a transport error names the request.
Error TransferError(const HttpRequest& req, CURLcode code, const char* errbuf,
                    std::optional<Error> failure) {
  if (failure) {
    if (failure->transport == TransportCause::kNone) return *std::move(failure);  // a sink's
    failure->message = req.method + " " + req.url + ": " + failure->message;
    return *std::move(failure);
  }
  std::string message = req.method + " " + req.url + ": " + curl_easy_strerror(code);
  if (errbuf != nullptr && errbuf[0] != '\0') message += std::string(" (") + errbuf + ")";
  return Error::Transport(CauseOf(code), std::move(message));
}

bool ReadableFile(const std::string& path) {
  return std::ifstream(path).good();
}

}  // namespace

// An easy handle with the multi handle that drives it: RoundTrip runs the transfer through the
// multi so that a stop request can wake its poll (curl_multi_wakeup) instead of waiting for
// libcurl's once-a-second progress callback. The easy handle keeps its connection alive between
// requests and keeps its options: nothing is reset, each request sets what differs.
struct Handle {
  EasyPtr easy;
  MultiPtr multi;
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string* proxy = nullptr;  // what CURLOPT_PROXY is set to
  bool busy = false;
  // The sockets of this handle's connections (libcurl opens and closes them through the
  // callbacks below), and the one the last request used.
  std::vector<curl_socket_t> sockets;
  curl_socket_t last = CURL_SOCKET_BAD;

  static curl_socket_t Open(void* user, curlsocktype, curl_sockaddr* address) {
    const curl_socket_t fd =
        ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd != CURL_SOCKET_BAD) static_cast<Handle*>(user)->sockets.push_back(fd);
    return fd;
  }
  static int Close(void* user, curl_socket_t fd) {
    std::erase(static_cast<Handle*>(user)->sockets, fd);
    return ::close(fd);
  }

  // An idle keep-alive connection on which the server sent something nobody asked for (or that
  // it closed) must not carry the next request: libcurl's liveness check takes readable bytes for
  // a live connection, and would read them as the next request's answer. net/http's persistConn
  // closes such a connection ("Unsolicited response received on idle HTTP channel"); here its
  // unasked bytes are dropped and a shutdown makes libcurl see it closed, and it connects anew.
  void RetireUnaskedConnection() {
    if (last == CURL_SOCKET_BAD || std::find(sockets.begin(), sockets.end(), last) == sockets.end())
      return;
    pollfd p{last, POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return;
    // Read what waits (libcurl's check peeks at it and would take the connection for live), so
    // that after the shutdown the check sees the end of the stream.
    char discard[4096];
    for (int i = 0; i < 256 && ::recv(last, discard, sizeof discard, MSG_DONTWAIT) > 0; ++i) {
    }
    ::shutdown(last, SHUT_RDWR);
  }
};

struct Transport::Impl {
  explicit Impl(const RestConfig& c)
      : config(c), openssl(CurlUsesOpenSsl()), proxies(ProxyEnvironment::FromEnvironment()) {}

  ~Impl() {
    // Handles first (the per-thread caches only hold them while this Impl lives), then the
    // share they use.
    std::lock_guard lock(handles_mu);
    handles.clear();
  }

  RestConfig config;
  const bool openssl;
  const ProxyEnvironment proxies;
  // Declared before `share` so the share's lock callbacks outlive it.
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  SharePtr share;
  // Every per-thread handle made for this transport, so that they all go with it.
  std::mutex handles_mu;
  std::vector<std::unique_ptr<Handle>> handles;

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->locks[data].unlock();
  }

  // An easy handle with the options that are the same for every request: connection, TLS,
  // HTTP version, proxy exceptions, the head bounds.
  EasyPtr NewEasy(char* errbuf) const {
    EasyPtr handle(curl_easy_init());
    CURL* h = handle.get();
    if (h == nullptr) return handle;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // we run on many threads
    curl_easy_setopt(h, CURLOPT_SHARE, share.get());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    // A name lookup that outlives its request (a resolver that never answers, past the connect
    // timeout or a stop) is left to finish on libcurl's resolver thread, which then frees it,
    // instead of the request waiting for it as libcurl otherwise does: net/http's dialer likewise
    // bounds the lookup by the dial's deadline and context.
    curl_easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, kKeepAliveIdleSeconds);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, kKeepAliveIntervalSeconds);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, &SetKeepAliveCount);
    if (openssl) curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &KeepTlsBuffers);
    // HTTP/1.1: h2 cost more client CPU per request in docs/benchmarks.md's measurements, and a
    // connection per thread is what the API server's HTTP/1.1 serving expects.
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(h, CURLOPT_NOPROXY, proxies.no_proxy.c_str());
    curl_easy_setopt(h, CURLOPT_PROXY, "");  // none until a request needs one
    // A proxy's CONNECT answer is not the server's: keep it out of the head callback.
    curl_easy_setopt(h, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, config.disable_compression ? nullptr : "gzip");
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
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &Answer::OnHeader);
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, &Answer::OnSend);
    return handle;
  }

  // The options of one request. Every one is set on every request (to its "none" value where the
  // request has none), because a reused handle still holds its previous request's options; the
  // caller sets the callbacks' data.
  void Configure(CURL* h, const std::string** proxy, const HttpRequest& req,
                 HeaderList& headers) const {
    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    // Set only when it changes: libcurl copies the string on every setopt.
    const std::string& want_proxy = proxies.ForUrl(req.url);
    if (*proxy != &want_proxy) {
      curl_easy_setopt(h, CURLOPT_PROXY, want_proxy.c_str());
      *proxy = &want_proxy;
    }
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
    // 0 = no total timeout.
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(std::max<long>(0, req.timeout.count())));

    const bool send_body =
        !req.body.empty() || req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    if (send_body) {
      // POSTFIELDS makes it a POST, its bytes sent with the head; CUSTOMREQUEST names the real
      // verb. Not copied: the request outlives the transfer. Never a null pointer (an empty view's
      // data() may be): with none, libcurl would read the body from its read callback, stdin by
      // default.
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

  std::unique_ptr<Handle> NewHandle() const {
    auto handle = std::make_unique<Handle>();
    handle->easy = NewEasy(handle->errbuf);
    handle->multi.reset(curl_multi_init());
    if (!handle->easy || !handle->multi) return nullptr;
    CURL* h = handle->easy.get();
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, &Handle::Open);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, handle.get());
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, &Handle::Close);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, handle.get());
    return handle;
  }

  // Called when a thread that cached `h` exits: it goes with its connection.
  void Retire(Handle* h) {
    std::lock_guard lock(handles_mu);
    std::erase_if(handles, [h](const std::unique_ptr<Handle>& p) { return p.get() == h; });
  }

  Handle* Register(std::unique_ptr<Handle> h) {
    std::lock_guard lock(handles_mu);
    handles.push_back(std::move(h));
    return handles.back().get();
  }
};

namespace {

// Each thread's handles, one per Transport it sends requests through. A worker thread sends one
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
  Handle* For(const std::shared_ptr<Transport::Impl>& impl) {
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
    Handle* h = impl->Register(std::move(handle));
    entries_.push_back({impl, h});
    return h;
  }

 private:
  // A thread uses one to three Transports (the API server's, and the delegated authn/authz
  // clients'); tests make many in turn.
  static constexpr std::size_t kMaxEntries = 8;
  struct Entry {
    std::weak_ptr<Transport::Impl> owner;
    Handle* handle;
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

  Handle* get() const { return handle_; }

 private:
  std::unique_ptr<Handle> own_;
  Handle* handle_ = nullptr;
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
  curl_share_setopt(impl->share.get(), CURLSHOPT_LOCKFUNC, &Impl::Lock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_UNLOCKFUNC, &Impl::Unlock);
  curl_share_setopt(impl->share.get(), CURLSHOPT_USERDATA, impl.get());
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl->share.get(), CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  return std::make_shared<Transport>(Private{}, std::move(impl));
}

Transport::Transport(Private, std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

Result<HttpResponse> Transport::RoundTrip(const HttpRequest& request, std::stop_token stop) {
  HandleLease lease(impl_);
  Handle* h = lease.get();
  if (h == nullptr) return Error::Transport(TransportCause::kOther, "curl_easy_init failed");
  CURL* easy = h->easy.get();
  h->errbuf[0] = '\0';
  h->RetireUnaskedConnection();
  Answer answer;
  answer.max_body = request.max_body_bytes;
  answer.sink = request.body_sink;
  answer.easy = easy;
  answer.replayable = request.method == "GET" || request.method == "HEAD" ||
                      request.method == "OPTIONS" || request.method == "TRACE";
  HeaderList headers;
  impl_->Configure(easy, &h->proxy, request, headers);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Answer::OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &answer);
  curl_easy_setopt(easy, CURLOPT_PREREQDATA, &answer);

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
  if (!finished) return Error::Local(errors::reason::kCanceled, "request canceled");
  if (rc != CURLE_OK || answer.failure) {
    return TransferError(request, rc, h->errbuf, std::move(answer.failure));
  }
  HttpResponse resp;
  resp.status = static_cast<int>(answer.HttpStatus());
  if (answer.sink != nullptr && answer.mode == Answer::Mode::kUndecided && resp.status >= 200 &&
      resp.status < 300) {
    answer.sink->Begin(answer.head.content_type());  // a 2xx answer without a body
  }
  resp.body = std::move(answer.body);
  EnsurePadding(resp.body);
  resp.retry_after = answer.head.retry_after();
  resp.content_type = answer.head.content_type();
  return resp;
}

// --- streaming -------------------------------------------------------------------------------

struct HttpStream::State {
  std::shared_ptr<Transport::Impl> impl;  // keeps the share alive while the handle uses it
  HttpRequest request;
  std::string body;  // request.body's bytes, which curl points into
  std::unique_ptr<Handle> handle;
  HeaderList headers;
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
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, nullptr);  // a GET: resent as libcurl does
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
        return TransferError(s.request, s.result, s.handle->errbuf, s.failure);
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
