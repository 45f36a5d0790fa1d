#include "test/unit/server/tls_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "pkg/client/transport.h"

namespace kcm::server::testing {

HttpsResponse HttpsGet(int port, const std::string& path, const GetOptions& o) {
  HttpsResponse r;
  auto start = std::chrono::steady_clock::now();
  client::RestConfig config;
  config.insecure = true;  // Self-signed serving certificate.
  config.cert_file = o.cert_file;
  config.key_file = o.key_file;
  config.disable_compression = true;
  if (auto transport = client::Transport::Create(config); transport.ok()) {
    client::HttpRequest request;
    request.url = "https://127.0.0.1:" + std::to_string(port) + path;
    request.method = o.method;
    request.body = o.body;
    request.timeout = std::chrono::milliseconds(o.timeout_ms);
    if (!o.token.empty()) request.headers.emplace_back("Authorization", "Bearer " + o.token);
    for (const auto& h : o.headers) {
      const auto colon = h.find(':');
      std::string value = colon == std::string::npos ? "" : h.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      request.headers.emplace_back(h.substr(0, colon), value);
    }
    if (auto answer = (*transport)->RoundTrip(request); answer.ok()) {
      r.code = answer->status;
      r.body = std::move(answer->body);
      r.content_type = std::move(answer->content_type);
    }
  }
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  return r;
}

int ConnectTcp(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

std::string ClientHelloBytes() {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  BIO* rbio = BIO_new(BIO_s_mem());
  BIO* wbio = BIO_new(BIO_s_mem());
  SSL_set_bio(ssl, rbio, wbio);  // ssl owns both
  SSL_set_connect_state(ssl);
  SSL_do_handshake(ssl);  // Writes the ClientHello, then wants to read.
  std::string out;
  char buf[4096];
  int n;
  while ((n = BIO_read(wbio, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return out;
}

bool WaitPeerClosed(int fd, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::max<long>(1, left.count())));
    if (r < 0) return false;
    if (r == 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;  // EOF or reset
  }
  return false;
}

namespace {

// Whether a failed SSL_read only hit the socket's receive timeout (say after reading nothing but
// TLS 1.3 session tickets) rather than a close or a TLS error.
bool ReadTimedOut(SSL* ssl, int n) {
  int err = SSL_get_error(ssl, n);
  bool timed_out = err == SSL_ERROR_WANT_READ ||
                   (err == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK));
  ERR_clear_error();
  return timed_out;
}

}  // namespace

struct TlsClient::State {
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  int fd = -1;
  std::string pending;  // bytes read past the last response
  ~State() {
    if (ssl) SSL_free(ssl);
    if (ctx) SSL_CTX_free(ctx);
    if (fd >= 0) close(fd);
  }
};

TlsClient::TlsClient(int port, const Options& o) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.ctx = SSL_CTX_new(TLS_client_method());
  if (o.max_version) SSL_CTX_set_max_proto_version(s.ctx, o.max_version);
  if (!o.ciphers.empty() && SSL_CTX_set_cipher_list(s.ctx, o.ciphers.c_str()) != 1) return;
  if (!o.cert_file.empty() &&
      (SSL_CTX_use_certificate_chain_file(s.ctx, o.cert_file.c_str()) != 1 ||
       SSL_CTX_use_PrivateKey_file(s.ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)) {
    return;
  }
  s.fd = ConnectTcp(port);
  if (s.fd < 0) return;
  s.ssl = SSL_new(s.ctx);
  SSL_set_fd(s.ssl, s.fd);
  handshake_ok_ = SSL_connect(s.ssl) == 1;
  ERR_clear_error();
}

TlsClient::~TlsClient() = default;

bool TlsClient::Write(std::string_view data) {
  if (!handshake_ok_) return false;
  size_t off = 0;
  while (off < data.size()) {
    int n = SSL_write(state_->ssl, data.data() + off, static_cast<int>(data.size() - off));
    if (n <= 0) {
      ERR_clear_error();
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string TlsClient::ReadResponse(std::chrono::milliseconds limit) {
  if (!handshake_ok_) return "";
  State& s = *state_;
  auto deadline = std::chrono::steady_clock::now() + limit;
  std::string& buf = s.pending;
  while (std::chrono::steady_clock::now() < deadline) {
    size_t head_end = buf.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t length = 0;
      std::string head = buf.substr(0, head_end);
      for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (size_t cl = head.find("content-length:"); cl != std::string::npos) {
        length = std::strtoul(head.c_str() + cl + 15, nullptr, 10);
      }
      if (buf.size() >= head_end + 4 + length) {
        std::string out = buf.substr(0, head_end + 4 + length);
        buf.erase(0, out.size());
        return out;
      }
    }
    if (SSL_pending(s.ssl) == 0) {
      pollfd p{s.fd, POLLIN, 0};
      if (poll(&p, 1, 100) == 0) continue;
    }
    char chunk[4096];
    int n = SSL_read(s.ssl, chunk, sizeof(chunk));
    if (n <= 0) {
      if (ReadTimedOut(s.ssl, n)) continue;
      return "";
    }
    buf.append(chunk, static_cast<size_t>(n));
  }
  return "";
}

bool TlsClient::WaitClosed(std::chrono::milliseconds limit) {
  if (!handshake_ok_) return true;
  State& s = *state_;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (SSL_pending(s.ssl) == 0) {
      pollfd p{s.fd, POLLIN, 0};
      if (poll(&p, 1, 50) == 0) continue;
    }
    char chunk[4096];
    int n = SSL_read(s.ssl, chunk, sizeof(chunk));
    if (n <= 0 && !ReadTimedOut(s.ssl, n)) return true;
  }
  return false;
}

TestCerts::TestCerts() {
  char tmpl[] = "/tmp/kcm-server-test-XXXXXX";
  if (mkdtemp(tmpl) != nullptr) dir_ = tmpl;
}

TestCerts::~TestCerts() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

namespace {

bool Run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

const char* const kEcKey = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";

}  // namespace

TestCerts::Pair TestCerts::MakeCA(const std::string& name) {
  Pair p{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
  if (!Run("openssl req -x509" + std::string(kEcKey) + "-keyout " + p.key + " -out " + p.cert +
           " -subj /CN=" + name + " -days 2")) {
    return {};
  }
  return p;
}

TestCerts::Pair TestCerts::MakeClientCert(const std::string& name, const std::string& subject,
                                          const Pair& ca) {
  Pair p{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
  const std::string ext = dir_ + "/" + name + ".ext";
  std::ofstream(ext) << "extendedKeyUsage=clientAuth\n";
  if (!Run("openssl req" + std::string(kEcKey) + "-keyout " + p.key + " -out " + dir_ + "/" + name +
           ".csr -subj '" + subject + "'") ||
      !Run("openssl x509 -req -in " + dir_ + "/" + name + ".csr -CA " + ca.cert + " -CAkey " +
           ca.key + " -CAcreateserial -out " + p.cert + " -days 2 -extfile " + ext)) {
    return {};
  }
  return p;
}

}  // namespace kcm::server::testing
