#include "bench/client/http1_prototype.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <optional>

#include "pkg/util/openssl_ptr.h"

namespace kcm::bench {
namespace {

Error Fail(std::string message) {
  return Error::Transport(TransportCause::kOther, std::move(message));
}

std::string SslError() {
  const unsigned long e = ERR_get_error();
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

struct PrototypeClient::Impl {
  util::SslCtxPtr ctx;
  std::string host;  // name or IP, without brackets
  std::string port;
  std::string host_header;
  bool host_is_ip = false;
  bool verify = true;
};

PrototypeClient::PrototypeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PrototypeClient::~PrototypeClient() = default;

Result<std::shared_ptr<PrototypeClient>> PrototypeClient::Create(const client::RestConfig& config) {
  auto impl = std::make_unique<Impl>();
  std::string_view url = config.host;
  if (url.starts_with("https://")) url.remove_prefix(8);
  if (const auto slash = url.find('/'); slash != std::string_view::npos) url = url.substr(0, slash);
  impl->host_header = std::string(url);
  std::string_view host = url, port = "443";
  if (url.starts_with('[')) {
    const auto close = url.find(']');
    host = url.substr(1, close - 1);
    if (close + 1 < url.size() && url[close + 1] == ':') port = url.substr(close + 2);
  } else if (const auto colon = url.rfind(':'); colon != std::string_view::npos) {
    host = url.substr(0, colon);
    port = url.substr(colon + 1);
  }
  impl->host = std::string(host);
  impl->port = std::string(port);
  in6_addr a6{};
  in_addr a4{};
  impl->host_is_ip = inet_pton(AF_INET, impl->host.c_str(), &a4) == 1 ||
                     inet_pton(AF_INET6, impl->host.c_str(), &a6) == 1;
  impl->ctx.reset(SSL_CTX_new(TLS_client_method()));
  SSL_CTX* ctx = impl->ctx.get();
  impl->verify = !config.insecure;
  SSL_CTX_set_verify(ctx, impl->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  if (!config.ca_data.empty()) {
    util::BioPtr bio(
        BIO_new_mem_buf(config.ca_data.data(), static_cast<int>(config.ca_data.size())));
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, cert);
      X509_free(cert);
    }
    ERR_clear_error();
  } else if (!config.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, config.ca_file.c_str(), nullptr) != 1) {
      return Fail("CA file " + config.ca_file + ": " + SslError());
    }
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  if (!config.cert_data.empty()) {
    util::BioPtr bio(
        BIO_new_mem_buf(config.cert_data.data(), static_cast<int>(config.cert_data.size())));
    X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
    if (cert == nullptr || SSL_CTX_use_certificate(ctx, cert) != 1) {
      return Fail("client certificate: " + SslError());
    }
    X509_free(cert);
  } else if (!config.cert_file.empty() &&
             SSL_CTX_use_certificate_chain_file(ctx, config.cert_file.c_str()) != 1) {
    return Fail("client certificate: " + SslError());
  }
  if (!config.key_data.empty()) {
    util::BioPtr bio(
        BIO_new_mem_buf(config.key_data.data(), static_cast<int>(config.key_data.size())));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
    if (key == nullptr || SSL_CTX_use_PrivateKey(ctx, key) != 1) {
      return Fail("client key: " + SslError());
    }
    EVP_PKEY_free(key);
  } else if (!config.key_file.empty() &&
             SSL_CTX_use_PrivateKey_file(ctx, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Fail("client key: " + SslError());
  }
  SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>("\x08http/1.1"), 9);
  return std::make_shared<PrototypeClient>(std::move(impl));
}

struct PrototypeConnection::State {
  int fd = -1;
  util::SslPtr ssl;
  std::string in;  // received, not yet consumed
  std::size_t pos = 0;
  std::string out;

  ~State() { Close(); }
  void Close() {
    ssl.reset();
    if (fd >= 0) ::close(fd);
    fd = -1;
    in.clear();
    pos = 0;
  }
  // Reads more bytes into `in`; false on EOF or error.
  bool Fill() {
    if (pos > 0 && pos == in.size()) {
      in.clear();
      pos = 0;
    }
    const std::size_t old = in.size();
    in.resize(old + 16384);
    const int n = SSL_read(ssl.get(), in.data() + old, 16384);
    in.resize(old + (n > 0 ? static_cast<std::size_t>(n) : 0));
    return n > 0;
  }
  // The next CRLF-terminated line (without CRLF), reading as needed.
  std::optional<std::string_view> Line() {
    for (;;) {
      const auto eol = in.find("\r\n", pos);
      if (eol != std::string::npos) {
        std::string_view line(in.data() + pos, eol - pos);
        pos = eol + 2;
        return line;
      }
      if (!Fill()) return std::nullopt;
    }
  }
  // Appends exactly n body bytes to *body.
  bool Take(std::size_t n, std::string* body) {
    while (n > 0) {
      if (pos == in.size() && !Fill()) return false;
      const std::size_t k = std::min(n, in.size() - pos);
      body->append(in, pos, k);
      pos += k;
      n -= k;
    }
    return true;
  }
};

PrototypeConnection::PrototypeConnection(std::shared_ptr<PrototypeClient> client)
    : client_(std::move(client)), state_(std::make_unique<State>()) {}
PrototypeConnection::~PrototypeConnection() = default;

Result<PrototypeAnswer> PrototypeConnection::Do(
    std::string_view method, std::string_view path,
    const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body) {
  PrototypeClient::Impl& c = client_->impl();
  State& s = *state_;
  if (s.fd < 0) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(c.host.c_str(), c.port.c_str(), &hints, &res) != 0 || res == nullptr) {
      return Fail("resolve " + c.host);
    }
    s.fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int rc = ::connect(s.fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0) {
      s.Close();
      return Fail("connect: " + std::string(std::strerror(errno)));
    }
    const int one = 1;
    setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(s.fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    s.ssl.reset(SSL_new(c.ctx.get()));
    SSL_set_fd(s.ssl.get(), s.fd);
    if (c.host_is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s.ssl.get()), c.host.c_str());
    } else {
      SSL_set_tlsext_host_name(s.ssl.get(), c.host.c_str());
      SSL_set1_host(s.ssl.get(), c.host.c_str());
    }
    if (SSL_connect(s.ssl.get()) != 1) {
      const std::string e = SslError();
      s.Close();
      return Fail("TLS handshake: " + e);
    }
  }
  std::string& out = s.out;
  out.clear();
  out.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ");
  out.append(c.host_header).append("\r\n");
  for (const auto& [name, value] : headers) out.append(name).append(": ").append(value) += "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    out.append("Content-Length: ").append(std::to_string(body.size())) += "\r\n";
  }
  out += "\r\n";
  out.append(body);
  if (SSL_write(s.ssl.get(), out.data(), static_cast<int>(out.size())) <= 0) {
    s.Close();
    return Fail("write");
  }
  PrototypeAnswer answer;
  auto status_line = s.Line();
  if (!status_line || status_line->size() < 12) {
    s.Close();
    return Fail("no status line");
  }
  std::from_chars(status_line->data() + 9, status_line->data() + 12, answer.status);
  std::size_t length = 0;
  bool chunked = false, has_length = false, close = false;
  for (;;) {
    auto line = s.Line();
    if (!line) {
      s.Close();
      return Fail("headers cut");
    }
    if (line->empty()) break;
    const auto colon = line->find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line->substr(0, colon);
    std::string_view value = line->substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (EqualsNoCase(name, "Content-Length")) {
      std::from_chars(value.data(), value.data() + value.size(), length);
      has_length = true;
    } else if (EqualsNoCase(name, "Transfer-Encoding")) {
      chunked = EqualsNoCase(value, "chunked");
    } else if (EqualsNoCase(name, "Connection")) {
      close = EqualsNoCase(value, "close");
    }
  }
  bool ok = true;
  if (chunked) {
    for (;;) {
      auto size_line = s.Line();
      if (!size_line) {
        ok = false;
        break;
      }
      std::size_t n = 0;
      std::from_chars(size_line->data(), size_line->data() + size_line->size(), n, 16);
      if (n == 0) {
        while (auto trailer = s.Line()) {
          if (trailer->empty()) break;
        }
        break;
      }
      std::string crlf;
      if (!s.Take(n, &answer.body) || !s.Take(2, &crlf)) {
        ok = false;
        break;
      }
    }
  } else if (has_length) {
    answer.body.reserve(length);
    ok = s.Take(length, &answer.body);
  } else {
    while (s.Take(s.in.size() - s.pos, &answer.body) && s.Fill()) {
    }
    close = true;
  }
  if (!ok) {
    s.Close();
    return Fail("body cut");
  }
  if (close) s.Close();
  return answer;
}

}  // namespace kcm::bench
