#include "pkg/server/secure_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "pkg/metrics/metrics.h"
#include "pkg/metrics/process.h"
#include "pkg/server/openssl_ptr.h"
#include "pkg/server/self_signed_cert.h"

namespace kcm::server {
namespace {

constexpr int kWorkers = 4;
constexpr size_t kMaxRequestHead = 16 * 1024;
constexpr int kIoTimeoutSeconds = 10;

using namespace internal;  // NOLINT: the OpenSSL owning pointers

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Request {
  std::string method;
  std::string path;
  std::string query;
  std::string authorization;
};

// Parses the request line and the Authorization header out of an HTTP/1.x request head.
bool ParseRequestHead(const std::string& head, Request* req) {
  size_t line_end = head.find("\r\n");
  std::string line = head.substr(0, line_end);
  size_t sp1 = line.find(' ');
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return false;
  req->method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t q = target.find('?');
  req->path = target.substr(0, q);
  if (q != std::string::npos) req->query = target.substr(q + 1);
  size_t pos = line_end;
  while (pos != std::string::npos && pos + 2 < head.size()) {
    size_t next = head.find("\r\n", pos + 2);
    std::string header =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    size_t colon = header.find(':');
    if (colon != std::string::npos) {
      std::string name = header.substr(0, colon);
      for (char& c : name) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
      if (name == "authorization") {
        std::string value = header.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        req->authorization = value;
      }
    }
    pos = next;
  }
  return !req->path.empty() && req->path[0] == '/';
}

const char* StatusText(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return "Internal Server Error";
  }
}

}  // namespace

struct SecureServer::Impl {
  ServingOptions options;
  std::vector<HealthCheck> health_checks;
  std::vector<HealthCheck> ready_checks;
  std::shared_ptr<RequestAuthorizer> authorizer;
  SslCtxPtr ssl_ctx;
  Fd listen_fd;
  Fd wake_read, wake_write;  // Self-pipe that wakes the accept loop on Stop.
  int port = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Fd> pending;
  bool stopping = false;
  std::vector<std::jthread> threads;

  bool IsLoopback() const {
    const std::string& a = options.bind_address;
    return a == "localhost" || a.rfind("127.", 0) == 0 || a == "::1";
  }

  bool AlwaysAllowed(const std::string& path) const {
    for (const auto& p : options.always_allow_paths) {
      if (p == path) return true;
      if (p.size() > 1 && p.back() == '*' && path.rfind(p.substr(0, p.size() - 1), 0) == 0) {
        return true;
      }
    }
    return false;
  }

  // Runs the checks; returns the HTTP code and the body (verbose lists each check, as upstream).
  std::pair<int, std::string> RunChecks(const std::vector<const std::vector<HealthCheck>*>& sets,
                                        bool verbose) const {
    bool ok = true;
    std::string detail;
    for (const auto* set : sets) {
      for (const auto& c : *set) {
        Status s = c.check();
        if (s.ok()) {
          detail += "[+]" + c.name + " ok\n";
        } else {
          ok = false;
          detail += "[-]" + c.name + " failed: " + s.error().message + "\n";
        }
      }
    }
    if (ok) return {200, verbose ? detail + "healthz check passed\n" : "ok"};
    return {500, detail + "healthz check failed\n"};
  }

  // Decides the response for one request: {code, content type, body}.
  std::tuple<int, std::string, std::string> Serve(const Request& req) const {
    const std::string text = "text/plain; charset=utf-8";
    if (req.method != "GET" && req.method != "HEAD") return {405, text, "method not allowed\n"};
    if (!AlwaysAllowed(req.path)) {
      if (authorizer) {
        std::string token;
        if (req.authorization.rfind("Bearer ", 0) == 0) token = req.authorization.substr(7);
        auto decision = authorizer->Authorize(token, "get", req.path);
        if (!decision.ok()) {
          LOG(WARNING) << "authorizing " << req.path << ": " << decision.error().ToString();
          return {500, text, "authorization error\n"};
        }
        if (*decision == RequestAuthorizer::Decision::kUnauthenticated) {
          return {401, text, "Unauthorized\n"};
        }
        if (*decision == RequestAuthorizer::Decision::kForbidden) {
          return {403, text, "forbidden: " + req.path + "\n"};
        }
      } else if (!IsLoopback()) {
        return {403, text,
                "forbidden: no authorizer configured for " + req.path + " off loopback\n"};
      }
    }
    bool verbose = req.query.find("verbose") != std::string::npos;
    if (req.path == "/metrics") {
      metrics::UpdateProcessMetrics();
      return {200, "text/plain; version=0.0.4; charset=utf-8", metrics::SerializeText()};
    }
    if (req.path == "/healthz" || req.path == "/livez") {
      auto [code, body] = RunChecks({&health_checks}, verbose);
      return {code, text, body};
    }
    if (req.path == "/readyz") {
      auto [code, body] = RunChecks({&health_checks, &ready_checks}, verbose);
      return {code, text, body};
    }
    return {404, text, "404 page not found\n"};
  }

  void HandleConnection(Fd fd) {
    timeval tv{kIoTimeoutSeconds, 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    SslPtr ssl(SSL_new(ssl_ctx.get()));
    if (!ssl || SSL_set_fd(ssl.get(), fd.get()) != 1 || SSL_accept(ssl.get()) != 1) {
      ERR_clear_error();
      return;  // A failed handshake (a plain-HTTP probe, a scanner) is not worth a log line.
    }
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxRequestHead) {
      int n = SSL_read(ssl.get(), buf, sizeof(buf));
      if (n <= 0) {
        ERR_clear_error();
        return;
      }
      head.append(buf, static_cast<size_t>(n));
    }
    Request req;
    int code;
    std::string type, body;
    if (!ParseRequestHead(head, &req)) {
      code = 400;
      type = "text/plain";
      body = "bad request\n";
    } else {
      std::tie(code, type, body) = Serve(req);
    }
    std::string response =
        "HTTP/1.1 " + std::to_string(code) + " " + StatusText(code) + "\r\nContent-Type: " + type +
        "\r\nX-Content-Type-Options: nosniff\r\nContent-Length: " + std::to_string(body.size()) +
        "\r\nConnection: close\r\n\r\n";
    if (req.method != "HEAD") response += body;
    size_t off = 0;
    while (off < response.size()) {
      int n = SSL_write(ssl.get(), response.data() + off, static_cast<int>(response.size() - off));
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    SSL_shutdown(ssl.get());
    ERR_clear_error();
  }

  void AcceptLoop() {
    while (true) {
      pollfd fds[2] = {{listen_fd.get(), POLLIN, 0}, {wake_read.get(), POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        PLOG(ERROR) << "https server: poll";
        return;
      }
      if (fds[1].revents != 0) return;
      if (fds[0].revents & POLLIN) {
        Fd conn(accept4(listen_fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (conn.get() < 0) continue;
        std::lock_guard lock(mu);
        if (pending.size() >= 64) continue;  // Overloaded: drop rather than queue without bound.
        pending.push_back(std::move(conn));
        cv.notify_one();
      }
    }
  }

  void WorkerLoop() {
    while (true) {
      Fd conn;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return stopping || !pending.empty(); });
        if (stopping) return;
        conn = std::move(pending.front());
        pending.pop_front();
      }
      HandleConnection(std::move(conn));
    }
  }
};

SecureServer::SecureServer(ServingOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

SecureServer::~SecureServer() {
  Stop();
}

void SecureServer::AddHealthCheck(HealthCheck check) {
  impl_->health_checks.push_back(std::move(check));
}
void SecureServer::AddReadyCheck(HealthCheck check) {
  impl_->ready_checks.push_back(std::move(check));
}
void SecureServer::SetAuthorizer(std::shared_ptr<RequestAuthorizer> authorizer) {
  impl_->authorizer = std::move(authorizer);
}

namespace {

Error ServingError(const std::string& message) {
  return Error::Local("InvalidServing", message);
}

Result<std::string> ReadFile(const std::string& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return ServingError("cannot read " + path);
  std::string out;
  char buf[4096];
  int n;
  while ((n = BIO_read(bio.get(), buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

Status SecureServer::Start() {
  const ServingOptions& o = impl_->options;
  std::string cert_pem, key_pem;
  if (!o.tls_cert_file.empty()) {
    auto cert = ReadFile(o.tls_cert_file);
    if (!cert.ok()) return cert.error();
    auto key = ReadFile(o.tls_private_key_file);
    if (!key.ok()) return key.error();
    cert_pem = std::move(*cert);
    key_pem = std::move(*key);
  } else {
    auto pair = MakeSelfSignedCertificate("localhost", {"127.0.0.1"});
    if (!pair.ok()) return pair.error();
    cert_pem = std::move(pair->certificate);
    key_pem = std::move(pair->private_key);
  }

  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) return ServingError("SSL_CTX_new failed");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  BioPtr cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!cert || SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1) {
    ERR_clear_error();
    return ServingError("bad serving certificate " + o.tls_cert_file);
  }
  // Intermediate certificates after the leaf in the same file form the chain.
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(ctx.get(), extra);
  }
  ERR_clear_error();
  if (!key || SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    return ServingError("bad serving key " + o.tls_private_key_file +
                        " (or it does not match the certificate)");
  }
  impl_->ssl_ctx = std::move(ctx);

  std::string where = o.bind_address + ":" + std::to_string(o.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port = std::to_string(o.port);
  if (getaddrinfo(o.bind_address.empty() ? nullptr : o.bind_address.c_str(), port.c_str(), &hints,
                  &res) != 0 ||
      res == nullptr) {
    return ServingError("cannot resolve --bind-address " + o.bind_address);
  }
  std::unique_ptr<addrinfo, FnDeleter<freeaddrinfo>> res_owner(res);
  Fd fd(socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd.get() < 0 || bind(fd.get(), res->ai_addr, res->ai_addrlen) != 0 ||
      listen(fd.get(), 128) != 0) {
    return ServingError("cannot serve HTTPS on " + where + ": " + strerror(errno));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  impl_->port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl_->listen_fd = std::move(fd);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return ServingError("pipe failed");
  impl_->wake_read = Fd(pipe_fds[0]);
  impl_->wake_write = Fd(pipe_fds[1]);
  impl_->stopping = false;
  impl_->threads.emplace_back([impl = impl_.get()] { impl->AcceptLoop(); });
  for (int i = 0; i < kWorkers; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] { impl->WorkerLoop(); });
  }
  return OkStatus();
}

void SecureServer::Stop() {
  if (!impl_ || impl_->threads.empty()) return;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    impl_->pending.clear();
  }
  impl_->cv.notify_all();
  char b = 1;
  [[maybe_unused]] ssize_t n = write(impl_->wake_write.get(), &b, 1);
  impl_->threads.clear();  // jthread joins.
  impl_->listen_fd.Reset();
  impl_->wake_read.Reset();
  impl_->wake_write.Reset();
}

int SecureServer::Port() const {
  return impl_->port;
}

}  // namespace kcm::server
