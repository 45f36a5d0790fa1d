// SecureServer on Boost.Beast + Boost.Asio: one I/O thread runs every socket asynchronously, so
// hundreds of idle, slow or half-open connections cost a little memory each and never keep a
// health check waiting (a thread per connection cannot promise that). Each connection has one
// deadline for its TLS handshake plus request (Go's ReadTimeout) and an idle keep-alive timeout
// (upstream's IdleTimeout); connections beyond max_connections are closed at accept. Blocking
// work — delegated authorization (TokenReview, SubjectAccessReview), /metrics serialization and
// the handlers of Handle — runs on a small worker pool with a bounded queue; health endpoints
// (healthz.h) are answered on the I/O thread. Connection state is touched only on the I/O thread;
// workers get copies of what they need and post the outcome back.
#include "pkg/server/secure_server.h"

#include <glog/logging.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <optional>
#include <thread>

#include "pkg/metrics/metrics.h"
#include "pkg/metrics/process.h"
#include "pkg/server/always_allow_paths.h"
#include "pkg/server/authentication.h"
#include "pkg/server/tls_context.h"
#include "pkg/util/klog.h"

namespace kcm::server {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

// Request heads beyond this are refused (431); our endpoints take no body worth keeping.
constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 64 * 1024;
// How long a connection that is being closed may take to exchange TLS close_notify.
constexpr auto kShutdownTimeout = std::chrono::seconds(1);
// Accept failures (EMFILE, ENFILE) back off instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

const std::string kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

struct ServerMetrics {
  metrics::Counter refused_connections;
  metrics::Counter throttled_requests;
};

const ServerMetrics& GetServerMetrics() {
  static const metrics::CounterVec refused(
      "kcm_secure_serving_refused_connections_total",
      "Connections closed at accept because the server already had its maximum open.", {});
  static const metrics::CounterVec throttled(
      "kcm_secure_serving_throttled_requests_total",
      "Requests answered 429 because too many were waiting for authorization or /metrics.", {});
  static const ServerMetrics m{refused.With({}), throttled.With({})};
  return m;
}

Response Text(int code, std::string body) {
  return TextResponse(code, std::move(body));
}

// The authorization verb of a request for a path that is not an API resource: its method in
// lower case (upstream's RequestInfoFactory.NewRequestInfo).
std::string Verb(std::string_view method) {
  std::string verb(method);
  for (char& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return verb;
}

// What a worker needs to decide one request: copies, never the connection itself.
struct Job {
  Request request;
  std::string bearer_token;
  std::optional<UserInfo> user;  // authenticated by the server (certificate, front proxy)
  bool authorize = true;         // false: only /metrics serialization is needed
};

}  // namespace

struct SecureServer::Impl {
  ServingOptions options;
  HealthChecks checks;
  HealthSlis slis;
  std::map<std::string, Handler, std::less<>> handlers;
  std::shared_ptr<RequestAuthorizer> authorizer;
  AlwaysAllowPaths always_allow;  // parsed from options.always_allow_paths by Start
  util::X509StorePtr client_ca;
  util::X509StorePtr requestheader_ca;

  // Created by Start, destroyed by Stop in reverse order.
  std::unique_ptr<net::io_context> io;
  std::unique_ptr<net::ssl::context> tls;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<net::steady_timer> accept_backoff;
  std::unique_ptr<net::thread_pool> workers;
  std::thread io_thread;
  int port = 0;

  std::atomic<int> connections{0};  // open connections (decremented by ~Connection)
  std::atomic<int> pending{0};      // jobs queued or running on the workers
  std::atomic<bool> stopping{false};

  bool IsLoopback() const {
    const std::string& a = options.bind_address;
    return a == "localhost" || a.rfind("127.", 0) == 0 || a == "::1";
  }

  // Health endpoints and 404s; runs on the I/O thread (checks are quick by contract).
  Response ServeLocal(const std::string& path, std::string_view query) {
    if (!IsHealthEndpoint(path.substr(0, path.find('/', 1)))) {
      return Text(404, "404 page not found\n");
    }
    return ServeHealth(checks, slis, path, query);
  }

  // Paths answered on a worker: serialization and handlers may take a while.
  bool ServedByWorker(std::string_view path) const {
    return path == "/metrics" || path == "/metrics/slis" || handlers.contains(path);
  }

  // Runs on a worker: authorization (may block on the network), then the path's handler.
  // nullopt = allowed, and the I/O thread serves the path itself.
  std::optional<Response> Decide(const Job& job) {
    if (stopping) return Text(503, "shutting down\n");
    const std::string& path = job.request.path;
    if (job.authorize) {
      const std::string verb = Verb(job.request.method);
      auto decision = job.user ? authorizer->AuthorizeUser(*job.user, verb, path)
                               : authorizer->Authorize(job.bearer_token, verb, path);
      if (!decision.ok()) {
        KLOG_ERRORS(decision.error().ToString(), "Authorizing a request failed", "path", path);
        return Text(500, "Internal Server Error: authorization failed\n");
      }
      if (*decision == RequestAuthorizer::Decision::kUnauthenticated) {
        return Text(401, "Unauthorized\n");
      }
      if (*decision == RequestAuthorizer::Decision::kForbidden) {
        std::string who = job.user ? "User \"" + job.user->name + "\" " : std::string();
        return Text(403, "forbidden: " + who + "cannot " + verb + " path \"" + path + "\"\n");
      }
    }
    if (path == "/metrics") {
      metrics::UpdateProcessMetrics();
      return Response{200, kMetricsContentType, metrics::SerializeText(), {}};
    }
    if (path == "/metrics/slis") {
      // Upstream's metrics.HandlerWithReset: DELETE empties the registry.
      if (job.request.method == "DELETE") {
        slis.Reset();
        return Text(200, "metrics reset\n");
      }
      return Response{200, kMetricsContentType, slis.SerializeText(), {}};
    }
    if (auto it = handlers.find(path); it != handlers.end()) return it->second(job.request);
    return std::nullopt;
  }

  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
};

namespace {

// One client connection. Lives as long as an asynchronous operation or a worker job holds it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(SecureServer::Impl& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), first_byte_timer_(socket_.get_executor()) {
    server_.connections.fetch_add(1);
  }
  ~Connection() { server_.connections.fetch_sub(1); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // One deadline covers the wait for the first byte, the handshake and the whole first request.
  // The TLS machinery (≈ 85 kB of record buffers and state) is made only once the client has
  // sent something: a connection that never speaks costs a socket and a timer.
  void Start() {
    deadline_ = std::chrono::steady_clock::now() + server_.options.request_timeout;
    first_byte_timer_.expires_at(deadline_);
    first_byte_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;  // Cancelled: the client spoke first.
      beast::error_code ignored;
      self->socket_.close(ignored);
    });
    socket_.async_wait(tcp::socket::wait_read,
                       [self = shared_from_this()](beast::error_code ec) { self->StartTls(ec); });
  }

 private:
  void StartTls(beast::error_code ec) {
    first_byte_timer_.cancel();
    if (ec || !socket_.is_open()) return;  // Closed at the deadline, or the client went away.
    stream_.emplace(std::move(socket_), *server_.tls);
    beast::get_lowest_layer(*stream_).expires_at(deadline_);
    stream_->async_handshake(
        net::ssl::stream_base::server,
        beast::bind_front_handler(&Connection::OnHandshake, shared_from_this()));
  }

  void OnHandshake(beast::error_code ec) {
    // A failed handshake (a plain-HTTP probe, a scanner, a hang-up) is not worth a log line.
    if (ec) return;
    SSL* ssl = stream_->native_handle();
    if (server_.client_ca) {
      client_cert_ = internal::VerifyClientCertificate(ssl, server_.client_ca.get());
    }
    if (server_.requestheader_ca) {
      proxy_cert_ = internal::VerifyClientCertificate(ssl, server_.requestheader_ca.get());
    }
    ReadRequest();
  }

  void ReadRequest() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    http::async_read(*stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Connection::OnRead, shared_from_this()));
  }

  // Keep-alive: up to idle_timeout for the next request's first bytes, then the request deadline.
  void WaitForNextRequest() {
    if (buffer_.size() > 0) {  // Pipelined: the next request is already here.
      beast::get_lowest_layer(*stream_).expires_after(server_.options.request_timeout);
      ReadRequest();
      return;
    }
    beast::get_lowest_layer(*stream_).expires_after(server_.options.idle_timeout);
    stream_->async_read_some(
        buffer_.prepare(4096),
        beast::bind_front_handler(&Connection::OnIdleRead, shared_from_this()));
  }

  void OnIdleRead(beast::error_code ec, size_t n) {
    if (ec) return;  // Idle timeout or the client went away.
    buffer_.commit(n);
    beast::get_lowest_layer(*stream_).expires_after(server_.options.request_timeout);
    ReadRequest();
  }

  void OnRead(beast::error_code ec, size_t /*bytes*/) {
    if (ec == http::error::header_limit) {
      keep_alive_ = false;
      Reply(Text(431, "Request Header Fields Too Large\n"));
      return;
    }
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      Reply(Text(413, "Request Entity Too Large\n"));
      return;
    }
    if (ec && ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      keep_alive_ = false;
      Reply(Text(400, "Bad Request\n"));
      return;
    }
    if (ec) return;  // Timeout, end of stream, reset: nothing to answer.
    Dispatch();
  }

  void Dispatch() {
    const auto& req = parser_->get();
    keep_alive_ = req.keep_alive() && !server_.stopping;
    head_ = req.method() == http::verb::head;
    std::string_view target(req.target().data(), req.target().size());
    size_t q = target.find('?');
    std::string path(target.substr(0, q));
    query_ = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
    if (path.empty() || path[0] != '/') {
      keep_alive_ = false;
      Reply(Text(400, "Bad Request\n"));
      return;
    }
    // The health endpoints only read; paths with a handler answer every method themselves, and
    // any other path is 404 whatever the method, after authorization (upstream's mux).
    if (req.method() != http::verb::get && !head_ &&
        IsHealthEndpoint(path.substr(0, path.find('/', 1)))) {
      Reply(Text(405, "method not allowed\n"));
      return;
    }

    Job job;
    job.request.method = std::string(req.method_string());
    job.request.path = path;
    job.request.query = query_;
    if (auto accept = req.find(http::field::accept); accept != req.end()) {
      job.request.accept = std::string(accept->value());
    }
    if (auto agent = req.find(http::field::user_agent); agent != req.end()) {
      job.request.user_agent = std::string(agent->value());
    }
    job.request.body = req.body();
    // An always-allowed path is served with no authentication either: upstream authenticates a
    // request without credentials as system:anonymous and its path authorizer allows the path
    // (DelegatingAuthorizationOptions.toAuthorizer: "kubernetes.io/always-allow-paths" ahead of
    // the webhook), so a caller with no credentials is served. Credentials sent are not looked
    // at, so health checks never wait for a TokenReview (S2: upstream answers 401 to credentials
    // that fail authentication even here).
    if (server_.always_allow.Matches(path)) {
      job.authorize = false;
    } else if (!server_.authorizer) {
      if (!server_.IsLoopback()) {
        Reply(Text(403, "forbidden: no authorizer configured for " + path + " off loopback\n"));
        return;
      }
      job.authorize = false;
    } else {
      Authenticate(job);
    }
    if (!job.authorize && !server_.ServedByWorker(path)) {
      Reply(server_.ServeLocal(path, query_));  // Health checks: never behind the workers.
      return;
    }
    if (server_.pending.fetch_add(1) >= server_.options.max_pending_requests) {
      server_.pending.fetch_sub(1);
      GetServerMetrics().throttled_requests.Inc();
      Response r = Text(429, "Too many requests, please try again later.\n");
      r.headers.emplace_back("Retry-After", "1");
      Reply(std::move(r));
      return;
    }
    auto executor = stream_->get_executor();
    net::post(*server_.workers, [self = shared_from_this(), job = std::move(job), executor] {
      std::optional<Response> outcome;
      try {
        outcome = self->server_.Decide(job);
      } catch (const std::exception& e) {  // An exception must not end a worker thread.
        KLOG_ERRORS(e.what(), "Serving a request failed", "path", job.request.path);
        outcome = Text(500, "Internal Server Error\n");
      }
      self->server_.pending.fetch_sub(1);
      net::post(executor, [self, path = job.request.path, outcome = std::move(outcome)]() mutable {
        self->Reply(outcome ? std::move(*outcome) : self->server_.ServeLocal(path, self->query_));
      });
    });
  }

  // The authenticators that need no network, in upstream's union order: front-proxy headers
  // behind a verified proxy certificate, then the client certificate; else the bearer token is
  // left for the authorizer's TokenReview.
  void Authenticate(Job& job) {
    const auto& req = parser_->get();
    const RequestHeaderOptions& rh = server_.options.request_header;
    if (proxy_cert_.verified) {
      if (!ProxyNameAllowed(proxy_cert_.common_name, rh.allowed_names)) {
        KLOG_V_INFOS(2, "Request-header client certificate is not in --requestheader-allowed-names",
                     "commonName", proxy_cert_.common_name);
      } else {
        HeaderList headers;
        for (const auto& field : req) {
          headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        }
        if (auto user = UserFromRequestHeaders(headers, rh)) {
          job.user = std::move(*user);
        }
      }
    }
    if (!job.user && client_cert_.verified && !client_cert_.common_name.empty()) {
      job.user = UserFromCertificate(client_cert_.common_name, client_cert_.organizations);
    }
    if (job.user) {
      AddAuthenticatedGroup(*job.user);
      return;
    }
    auto auth = req.find(http::field::authorization);
    if (auth != req.end()) {
      std::string_view value(auth->value().data(), auth->value().size());
      if (value.size() > 7 &&
          (value.substr(0, 7) == "Bearer " || value.substr(0, 7) == "bearer ")) {
        value.remove_prefix(7);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
        job.bearer_token = std::string(value);
      }
    }
  }

  void Reply(Response r) {
    auto& res = response_;
    res = {};
    res.version(parser_ ? parser_->get().version() : 11);
    res.result(static_cast<http::status>(r.code));
    res.set(http::field::content_type, r.content_type);
    res.set("X-Content-Type-Options", "nosniff");
    for (auto& [name, value] : r.headers) res.set(name, value);
    res.keep_alive(keep_alive_);
    const size_t length = r.body.size();
    if (!head_) res.body() = std::move(r.body);
    res.content_length(length);
    beast::get_lowest_layer(*stream_).expires_after(server_.options.request_timeout);
    http::async_write(*stream_, res,
                      beast::bind_front_handler(&Connection::OnWrite, shared_from_this()));
  }

  void OnWrite(beast::error_code ec, size_t /*bytes*/) {
    if (ec) return;
    if (!keep_alive_ || server_.stopping) {
      beast::get_lowest_layer(*stream_).expires_after(kShutdownTimeout);
      stream_->async_shutdown([self = shared_from_this()](beast::error_code) {});
      return;
    }
    WaitForNextRequest();
  }

  SecureServer::Impl& server_;
  tcp::socket socket_;  // until the first byte; then moved into stream_
  net::steady_timer first_byte_timer_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  internal::ClientCertificate client_cert_;
  internal::ClientCertificate proxy_cert_;
  std::string query_;
  bool keep_alive_ = false;
  bool head_ = false;
};

}  // namespace

void SecureServer::Impl::Accept() {
  acceptor->async_accept(
      [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void SecureServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || stopping) return;
  if (ec) {
    static std::atomic<uint64_t> accept_failures{0};
    if (accept_failures.fetch_add(1, std::memory_order_relaxed) % 100 == 0) {
      KLOG_WARNINGS("HTTPS server accept failed", "err", ec.message());
    }
    accept_backoff->expires_after(kAcceptBackoff);
    accept_backoff->async_wait([this](beast::error_code wait_ec) {
      if (!wait_ec) Accept();
    });
    return;
  }
  if (connections.load() >= options.max_connections) {
    GetServerMetrics().refused_connections.Inc();
    beast::error_code ignored;
    KLOG_V_INFOS(2, "Refusing a connection: too many open", "remote",
                 socket.remote_endpoint(ignored).address().to_string(), "maxConnections",
                 options.max_connections);
    socket.close(ignored);
  } else {
    try {
      std::make_shared<Connection>(*this, std::move(socket))->Start();
    } catch (const std::exception& e) {  // SSL_new failing (memory): drop this one connection.
      KLOG_ERRORS(e.what(), "HTTPS server: new connection failed");
    }
  }
  Accept();
}

SecureServer::SecureServer(ServingOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

SecureServer::~SecureServer() {
  Stop();
}

void SecureServer::AddHealthCheck(HealthCheck check) {
  impl_->checks.health.push_back(std::move(check));
}
void SecureServer::AddReadyCheck(HealthCheck check) {
  impl_->checks.ready.push_back(std::move(check));
}
void SecureServer::Handle(std::string path, Handler handler) {
  impl_->handlers.insert_or_assign(std::move(path), std::move(handler));
}
void SecureServer::SetAuthorizer(std::shared_ptr<RequestAuthorizer> authorizer) {
  impl_->authorizer = std::move(authorizer);
}

namespace {

Error ServingError(const std::string& message) {
  return Error::Local("InvalidServing", message);
}

}  // namespace

Status SecureServer::Start() {
  Impl& s = *impl_;
  const ServingOptions& o = s.options;
  auto always_allow = AlwaysAllowPaths::Parse(o.always_allow_paths);
  if (!always_allow.ok()) {
    return ServingError("--authorization-always-allow-paths: " + always_allow.error().message);
  }
  s.always_allow = std::move(*always_allow);
  std::vector<X509_STORE*> client_cas;
  if (!o.client_ca_file.empty()) {
    auto store = internal::LoadCABundle(o.client_ca_file, "--client-ca-file");
    if (!store.ok()) return store.error();
    s.client_ca = std::move(*store);
    client_cas.push_back(s.client_ca.get());
  }
  if (!o.request_header.client_ca_file.empty()) {
    auto store =
        internal::LoadCABundle(o.request_header.client_ca_file, "--requestheader-client-ca-file");
    if (!store.ok()) return store.error();
    s.requestheader_ca = std::move(*store);
    client_cas.push_back(s.requestheader_ca.get());
  }
  auto tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  if (Status st = internal::ConfigureServerContext(tls->native_handle(), o, client_cas); !st.ok()) {
    return st;
  }

  auto io = std::make_unique<net::io_context>(1);
  beast::error_code ec;
  std::string where = o.bind_address + ":" + std::to_string(o.port);
  tcp::resolver resolver(*io);
  auto endpoints =
      resolver.resolve(o.bind_address.empty() ? "0.0.0.0" : o.bind_address, std::to_string(o.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty())
    return ServingError("cannot resolve --bind-address " + o.bind_address);
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  auto acceptor = std::make_unique<tcp::acceptor>(*io);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return ServingError("cannot serve HTTPS on " + where + ": " + ec.message());
  s.port = acceptor->local_endpoint(ec).port();

  s.stopping = false;
  s.tls = std::move(tls);
  s.io = std::move(io);
  s.acceptor = std::move(acceptor);
  s.accept_backoff = std::make_unique<net::steady_timer>(*s.io);
  s.workers = std::make_unique<net::thread_pool>(static_cast<size_t>(o.worker_threads));
  s.Accept();
  s.io_thread = std::thread([io = s.io.get()] {
    // run() returns only once stopped; a handler's exception is logged and serving goes on.
    while (true) {
      try {
        io->run();
        return;
      } catch (const std::exception& e) {
        KLOG_ERRORS(e.what(), "HTTPS server failed");
      }
    }
  });
  return OkStatus();
}

void SecureServer::Stop() {
  if (!impl_ || !impl_->io) return;
  Impl& s = *impl_;
  s.stopping = true;
  s.io->stop();
  if (s.io_thread.joinable()) s.io_thread.join();
  // Jobs still queued answer 503 at once; running ones finish their authorizer call.
  s.workers->join();
  // I/O objects go before their io_context; the io_context's destruction drops the handlers that
  // still hold connections (closing their sockets); the TLS context goes last.
  s.accept_backoff.reset();
  s.acceptor.reset();
  s.workers.reset();
  s.io.reset();
  s.tls.reset();
}

int SecureServer::Port() const {
  return impl_->port;
}

}  // namespace kcm::server
