#include "pkg/client/internal/curl_handle.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <string_view>

#include "pkg/util/strings.h"

namespace kcm::client::internal {

void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

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

int SetKeepAliveCount(void*, curl_socket_t fd, curlsocktype purpose) {
  if (purpose == CURLSOCKTYPE_IPCXN) {
    // libcurl 7.88 has no CURLOPT_TCP_KEEPCNT (added in 8.9); set it on the socket.
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveProbes, sizeof kKeepAliveProbes);
  }
  return CURL_SOCKOPT_OK;
}

CURLcode KeepTlsBuffers(CURL*, void* ssl_ctx, void*) {
  SSL_CTX_clear_mode(static_cast<SSL_CTX*>(ssl_ctx), SSL_MODE_RELEASE_BUFFERS);
  return CURLE_OK;
}

bool CurlUsesOpenSsl() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  return info != nullptr && info->ssl_version != nullptr &&
         std::string_view(info->ssl_version).starts_with("OpenSSL/");
}

curl_slist* HeaderList::Build(const std::vector<std::pair<std::string, std::string>>& headers,
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

void RetireConnection(curl_socket_t fd) {
  // Read what waits (libcurl's check peeks at it and would take the connection for live), so
  // that after the shutdown the check sees the end of the stream.
  char discard[4096];
  for (int i = 0; i < 256 && ::recv(fd, discard, sizeof discard, MSG_DONTWAIT) > 0; ++i) {
  }
  ::shutdown(fd, SHUT_RDWR);
}

}  // namespace kcm::client::internal
