#include "test/unit/client/test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kcm::testing {
namespace {

std::string StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string Head(int status, const Headers& headers, bool has_content_type) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + StatusText(status) + "\r\n";
  if (!has_content_type) out += "Content-Type: application/json\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  return out;
}

bool HasContentType(const Headers& headers) {
  for (const auto& [k, v] : headers) {
    if (k == "Content-Type") return true;
  }
  return false;
}

class PlainConn final : public Conn {
 public:
  explicit PlainConn(int fd) : fd_(fd) {}
  bool WriteAll(std::string_view data) override {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  long ReadSome(char* buf, std::size_t n) override {
    const ssize_t r = ::recv(fd_, buf, n, 0);
    return r < 0 ? 0 : r;
  }
  int fd() const override { return fd_; }

 private:
  int fd_;
};

class TlsConn final : public Conn {
 public:
  TlsConn(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~TlsConn() override { SSL_free(ssl_); }
  bool WriteAll(std::string_view data) override {
    while (!data.empty()) {
      const int n = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  long ReadSome(char* buf, std::size_t n) override {
    const int r = SSL_read(ssl_, buf, static_cast<int>(n));
    return r < 0 ? 0 : r;
  }
  int fd() const override { return fd_; }
  std::string PeerCommonName() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return "";
    char cn[256] = {0};
    X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
    X509_free(cert);
    return cn;
  }

 private:
  int fd_;
  SSL* ssl_;
};

// Reads one request; false on EOF or a malformed request.
bool ReadRequest(Conn& conn, std::string& buf, RecordedRequest* out) {
  std::size_t head_end;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    char tmp[4096];
    const long n = conn.ReadSome(tmp, sizeof tmp);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<std::size_t>(n));
  }
  std::istringstream head(buf.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  std::istringstream request_line(line);
  std::string version;
  request_line >> out->method >> out->target >> version;
  const auto q = out->target.find('?');
  out->path = out->target.substr(0, q);
  out->query = q == std::string::npos ? "" : out->target.substr(q + 1);
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    out->headers[name] = value;
  }
  buf.erase(0, head_end + 4);
  std::size_t length = 0;
  if (auto it = out->headers.find("content-length"); it != out->headers.end()) {
    length = std::stoul(it->second);
  }
  while (buf.size() < length) {
    char tmp[4096];
    const long n = conn.ReadSome(tmp, sizeof tmp);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<std::size_t>(n));
  }
  out->body = buf.substr(0, length);
  buf.erase(0, length);
  return true;
}

}  // namespace

void Conn::Respond(int status, std::string_view body, const Headers& headers) {
  if (closed_) return;
  std::string out = Head(status, headers, HasContentType(headers));
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  WriteAll(out);
}

void Conn::StartChunked(int status, const Headers& headers) {
  if (closed_) return;
  WriteAll(Head(status, headers, HasContentType(headers)) + "Transfer-Encoding: chunked\r\n\r\n");
}

void Conn::Chunk(std::string_view data) {
  if (closed_ || data.empty()) return;
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  WriteAll(std::string(size) + std::string(data) + "\r\n");
}

void Conn::EndChunked() {
  if (!closed_) WriteAll("0\r\n\r\n");
}

void Conn::Close() {
  if (closed_) return;
  closed_ = true;
  ::shutdown(fd(), SHUT_RDWR);
}

void Conn::HoldOpen() {
  while (!closed_) {
    pollfd p{fd(), POLLIN, 0};
    const int r = ::poll(&p, 1, 20);
    if (r > 0) {
      char c;
      if (::recv(fd(), &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) return;  // peer closed
    }
    if (r < 0) return;
    // The server's stop shuts the socket down, which also ends the poll with POLLHUP.
    if (r > 0 && (p.revents & (POLLHUP | POLLERR)) != 0) return;
  }
}

struct TestServer::TlsContext {
  SSL_CTX* ctx = nullptr;
  ~TlsContext() {
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }
};

TestServer::TestServer(Handler handler, std::optional<TlsOptions> tls)
    : handler_(std::move(handler)) {
  if (tls) {
    tls_ = std::make_unique<TlsContext>();
    tls_->ctx = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(tls_->ctx, tls->cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls_->ctx, tls->key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      throw std::runtime_error("TestServer: cannot load server certificate");
    }
    if (!tls->client_ca_file.empty()) {
      SSL_CTX_load_verify_locations(tls_->ctx, tls->client_ca_file.c_str(), nullptr);
      SSL_CTX_set_client_CA_list(tls_->ctx, SSL_load_client_CA_file(tls->client_ca_file.c_str()));
      SSL_CTX_set_verify(
          tls_->ctx,
          SSL_VERIFY_PEER | (tls->require_client_cert ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
          nullptr);
    }
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("TestServer: bind/listen failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

TestServer::~TestServer() {
  stopping_.store(true);
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    threads = std::move(conn_threads_);
  }
  for (auto& t : threads) t.join();
}

std::string TestServer::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<RecordedRequest> TestServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

void TestServer::AcceptLoop() {
  while (!stopping_.load()) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::lock_guard lock(mu_);
    if (stopping_.load()) {
      ::close(fd);
      return;
    }
    connections_.fetch_add(1);
    open_fds_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestServer::Serve(int fd) {
  // A client that hangs up (a TLS handshake it refused) must not SIGPIPE the test process: a TLS
  // write goes through write(2), which has no MSG_NOSIGNAL. Blocked, the write fails with EPIPE.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  std::unique_ptr<Conn> conn;
  std::string client_cn;
  if (tls_) {
    SSL* ssl = SSL_new(tls_->ctx);
    SSL_set_fd(ssl, fd);
    auto tls_conn = std::make_unique<TlsConn>(fd, ssl);
    if (SSL_accept(ssl) == 1) {
      if (SSL_session_reused(ssl) == 1) resumed_sessions_.fetch_add(1);
      client_cn = tls_conn->PeerCommonName();
      conn = std::move(tls_conn);
    }
    ERR_clear_error();
  } else {
    conn = std::make_unique<PlainConn>(fd);
  }
  std::string buf;
  while (conn && !conn->closed() && !stopping_.load()) {
    RecordedRequest req;
    if (!ReadRequest(*conn, buf, &req)) break;
    req.client_cert_cn = client_cn;
    {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
    }
    handler_(req, *conn);
  }
  std::lock_guard lock(mu_);
  ::shutdown(fd, SHUT_RDWR);
  std::erase(open_fds_, fd);
  conn.reset();
  ::close(fd);
}

// --- helpers ---------------------------------------------------------------------------------

std::string GzipBomb(std::size_t inflated, std::string_view prefix, char fill) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  const std::string block(1 << 20, fill);
  std::string out;
  std::string buf(1 << 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(prefix.data()));
  z.avail_in = static_cast<uInt>(prefix.size());
  for (std::size_t left = inflated; left > 0 || z.avail_in > 0;) {
    if (z.avail_in == 0) {
      const std::size_t n = std::min(left, block.size());
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block.data()));
      z.avail_in = static_cast<uInt>(n);
      left -= n;
    }
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf.data());
      z.avail_out = static_cast<uInt>(buf.size());
      deflate(&z, flush);
      out.append(buf.data(), buf.size() - z.avail_out);
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return out;
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileOrDie(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

TempDir::TempDir() {
  std::string tmpl = "/tmp/kcm-client-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

const TestPki* TestPki::Get() {
  static const std::unique_ptr<TestPki> pki = []() -> std::unique_ptr<TestPki> {
    auto p = std::make_unique<TestPki>();
    const std::string d = p->dir.path() + "/";
    p->ca_crt = d + "ca.crt";
    p->ca_key = d + "ca.key";
    p->server_crt = d + "server.crt";
    p->server_key = d + "server.key";
    p->client_crt = d + "client.crt";
    p->client_key = d + "client.key";
    p->other_ca_crt = d + "other-ca.crt";
    WriteFileOrDie(d + "server.ext", "subjectAltName=IP:127.0.0.1\n");
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    const std::string q = " >/dev/null 2>&1";
    const std::string cmds[] = {
        "openssl req -x509" + ec + "-keyout " + p->ca_key + " -out " + p->ca_crt +
            " -subj /CN=test-ca -days 2" + q,
        "openssl req -x509" + ec + "-keyout " + d + "other-ca.key -out " + p->other_ca_crt +
            " -subj /CN=other-ca -days 2" + q,
        "openssl req" + ec + "-keyout " + p->server_key + " -out " + d +
            "server.csr -subj /CN=127.0.0.1" + q,
        "openssl x509 -req -in " + d + "server.csr -CA " + p->ca_crt + " -CAkey " + p->ca_key +
            " -CAcreateserial -out " + p->server_crt + " -days 2 -extfile " + d + "server.ext" + q,
        "openssl req" + ec + "-keyout " + p->client_key + " -out " + d +
            "client.csr -subj /CN=test-client" + q,
        "openssl x509 -req -in " + d + "client.csr -CA " + p->ca_crt + " -CAkey " + p->ca_key +
            " -CAcreateserial -out " + p->client_crt + " -days 2" + q,
    };
    for (const auto& cmd : cmds) {
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "TestPki: failed: %s\n", cmd.c_str());
        return nullptr;
      }
    }
    return p;
  }();
  return pki.get();
}

}  // namespace kcm::testing
