// The libcurl pieces the transport (transport.cc) and its streams (http_stream.cc) share: owning
// pointers for libcurl's handles, the request's header list, the socket and TLS callbacks every
// connection gets, and CURLcode → TransportCause.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/client/transport.h"
#include "pkg/util/result.h"

namespace kcm::client::internal {

// curl_global_init is not thread-safe and must run once per process before any handle exists.
void EnsureCurlGlobalInit();

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

TransportCause CauseOf(CURLcode code);

// The error of a transfer that did not end in a usable answer: a callback's own reason wins over
// libcurl's CURLE_WRITE_ERROR, and a transport error names the request.
Error TransferError(const HttpRequest& req, CURLcode code, const char* errbuf,
                    std::optional<Error> failure);

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

// Sets TCP_KEEPCNT on each new connection (CURLOPT_SOCKOPTFUNCTION).
int SetKeepAliveCount(void*, curl_socket_t fd, curlsocktype purpose);

// libcurl's OpenSSL backend sets SSL_MODE_RELEASE_BUFFERS on each connection's SSL_CTX, so OpenSSL
// frees a connection's read and write buffers (about 17 kB each) whenever they drain and allocates
// them again for the next record: a large malloc/free pair per TLS record each way. Our
// connections are few (one per thread that sends requests, one per watch) and busy, so each keeps
// its buffers. libcurl calls this for every new connection, before the connection's SSL object is
// made from that SSL_CTX.
CURLcode KeepTlsBuffers(CURL*, void* ssl_ctx, void*);
// The callback above receives an OpenSSL SSL_CTX only from libcurl's OpenSSL backend.
bool CurlUsesOpenSsl();

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
                    bool body_sent);

 private:
  std::string text_;
  std::vector<curl_slist> nodes_;
};

// Drops what waits on an idle connection's socket `fd` and shuts it down, so that libcurl's
// liveness check (which peeks at readable bytes and would take the connection for live) sees it
// closed and connects anew. The loop does it as soon as an idle connection turns readable
// (EventLoop::OnEvent): an idle keep-alive connection on which the server sent something nobody
// asked for (or that it closed) must not carry the next request, since libcurl's liveness check
// takes readable bytes for a live connection and would read them as the next request's answer.
// net/http's persistConn closes such a connection ("Unsolicited response received on idle HTTP
// channel").
void RetireConnection(curl_socket_t fd);

}  // namespace kcm::client::internal
