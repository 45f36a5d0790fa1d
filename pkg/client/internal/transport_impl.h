// Transport::Impl: the state one Transport shares with its streams (transport.cc, http_stream.cc):
// the RestConfig, the proxy environment read once, the share (DNS cache, TLS sessions), the two
// multis on the loop that run its requests and its streams (event_loop.h), and how a handle and
// a request are configured.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "pkg/client/internal/curl_handle.h"
#include "pkg/client/internal/event_loop.h"
#include "pkg/client/proxy_environment.h"
#include "pkg/client/rest_config.h"
#include "pkg/client/transport.h"

namespace kcm::client {

struct Transport::Impl {
  explicit Impl(const RestConfig& c)
      : config(c),
        openssl(internal::CurlUsesOpenSsl()),
        proxies(ProxyEnvironment::FromEnvironment()) {}

  RestConfig config;
  const bool openssl;
  const ProxyEnvironment proxies;
  // Declared before `share` so the share's lock callbacks outlive it.
  std::array<std::mutex, CURL_LOCK_DATA_LAST> locks;
  internal::SharePtr share;
  // Declared after `share`, so destroyed before it: their pooled handles use the share.
  // Requests, at most RequestMulti::kMaxRequests in flight.
  std::unique_ptr<internal::RequestMulti> requests;
  // Watches and streamed LISTs (byte channels), uncapped: a watch holds its transfer for
  // minutes, and dozens of them must not hold the requests' places. Their connections stay
  // apart from the requests', as a watch's own connection did before the loop.
  std::unique_ptr<internal::RequestMulti> streams;

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->locks[data].unlock();
  }

  // An easy handle with the options that are the same for every request: connection, TLS,
  // HTTP version, proxy exceptions, the head bounds.
  internal::EasyPtr NewEasy(char* errbuf) const {
    internal::EasyPtr handle(curl_easy_init());
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
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, internal::kKeepAliveIdleSeconds);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, internal::kKeepAliveIntervalSeconds);
    curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, &internal::SetKeepAliveCount);
    if (openssl) curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &internal::KeepTlsBuffers);
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
    return handle;
  }

  // The options of one request. Every one is set on every request (to its "none" value where the
  // request has none), because a reused handle still holds its previous request's options; the
  // caller sets the callbacks' data.
  void Configure(CURL* h, const std::string** proxy, const HttpRequest& req,
                 internal::HeaderList& headers) const {
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

  // Accept-Encoding of a request on a pooled streams handle, which a watch before may have
  // changed: gzip unless disabled, never on a watch (http_stream.cc says why).
  void SetEncoding(CURL* h, bool stream) const {
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING,
                     stream || config.disable_compression ? nullptr : "gzip");
  }
};

}  // namespace kcm::client
