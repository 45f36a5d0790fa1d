// SecureServer: the daemon's HTTPS endpoint for /metrics, /metrics/slis, /healthz, /livez,
// /readyz and the paths given handlers (the z-pages, /debug/flags/v) (daemon.md S1, S2). Health
// checks, handlers and the authorizer are set before Start; Start/Stop are called from one
// thread; checks run on the server's I/O thread and must be thread-safe and quick.
//
// Serving is asynchronous (one I/O thread, docs/design/daemon.md, "pkg/server"): each connection
// has a deadline for its TLS handshake plus request, an idle keep-alive timeout, and the number
// of connections is bounded; health endpoints are answered on the I/O thread and never wait
// behind authentication, authorization or /metrics, which run on a small worker pool.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/server/handler.h"
#include "pkg/server/healthz.h"
#include "pkg/util/result.h"

namespace kcm::server {

// Front-proxy (request header) authentication, upstream's --requestheader-* flags: a request whose
// client certificate verifies against `client_ca_file` (and whose CN is in `allowed_names`, when
// that is not empty) is taken to be from the user named in the first non-empty username header.
struct RequestHeaderOptions {
  std::string client_ca_file;  // empty = off
  std::vector<std::string> allowed_names;
  std::vector<std::string> username_headers = {"X-Remote-User"};
  std::vector<std::string> group_headers = {"X-Remote-Group"};
  std::vector<std::string> extra_headers_prefix = {"X-Remote-Extra-"};
};

struct ServingOptions {
  std::string bind_address = "0.0.0.0";
  int port = 10257;           // 0 = an ephemeral port (see SecureServer::Port)
  std::string tls_cert_file;  // PEM; both empty = a self-signed certificate made at start
  std::string tls_private_key_file;
  std::string tls_min_version = "VersionTLS12";  // or VersionTLS13
  std::vector<std::string> tls_cipher_suites;    // IANA names; empty = ECDHE + AEAD only
  // Served to anyone, without authentication or authorization (--authorization-always-allow-paths,
  // upstream's path matching: always_allow_paths.h). Start fails on a malformed entry.
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
  // x509 client certificate authentication (--client-ca-file): a verified client certificate's
  // CN is the user name, its O entries the groups. Empty = off.
  std::string client_ca_file;
  RequestHeaderOptions request_header;

  // Limits. Tests lower them; the daemon keeps the defaults.
  // TLS handshake + request head + body must arrive within this (Go's ReadTimeout); the response
  // must be written within it too.
  std::chrono::milliseconds request_timeout{10000};
  // A kept-alive connection waits this long for its next request (upstream's IdleTimeout).
  std::chrono::milliseconds idle_timeout{90000};
  // Connections beyond this are closed at accept (logged at V(2), counted).
  int max_connections = 1024;
  // Requests waiting for or in authorization (or /metrics serialization); beyond it: 429.
  int max_pending_requests = 64;
  int worker_threads = 4;
};

// An identity the server established itself (client certificate or front-proxy headers), to be
// authorized by a SubjectAccessReview.
struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// Decides whether a caller may read a path. The daemon plugs in delegated authentication and
// authorization (TokenReview + SubjectAccessReview); tests plug in a fake. Called on the server's
// worker threads, concurrently: implementations must be thread-safe, and may block (a network
// round trip) — they never hold up health checks.
class RequestAuthorizer {
 public:
  enum class Decision { kAllow, kUnauthenticated, kForbidden };
  virtual ~RequestAuthorizer() = default;
  // `bearer_token` is empty when the request carried none.
  virtual Result<Decision> Authorize(std::string_view bearer_token, std::string_view verb,
                                     std::string_view path) = 0;
  // Authorizes an already authenticated user (never answers kUnauthenticated). The default denies.
  virtual Result<Decision> AuthorizeUser(const UserInfo& /*user*/, std::string_view /*verb*/,
                                         std::string_view /*path*/) {
    return Decision::kForbidden;
  }
};

class SecureServer {
 public:
  explicit SecureServer(ServingOptions options);
  ~SecureServer();
  SecureServer(const SecureServer&) = delete;
  SecureServer& operator=(const SecureServer&) = delete;

  // /healthz and /livez run the health checks; /readyz runs them plus the readiness checks;
  // /<endpoint>/<name> runs one check, ?exclude=<name> skips one, ?verbose lists them.
  void AddHealthCheck(HealthCheck check);
  void AddReadyCheck(HealthCheck check);
  // Serves the exact path `path` with `handler`, on a worker thread, once the request is
  // authorized with the verb its method names in lower case ("get", "put"), as upstream's
  // RequestInfoFactory does for paths that are not API resources. The handler sees every method
  // and answers those it does not take itself (405, 406); a path without a handler is 404
  // whatever the method. A second handler for a path replaces the first.
  void Handle(std::string path, Handler handler);
  // Without an authorizer, paths outside always_allow_paths are served only on a loopback bind
  // address (S2: /metrics is never open to anyone unauthenticated off loopback).
  void SetAuthorizer(std::shared_ptr<RequestAuthorizer> authorizer);

  Status Start();
  // Closes every connection; waits for in-flight authorizations (bounded by the authorizer's own
  // timeout).
  void Stop();
  int Port() const;  // The bound port, after Start.

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcm::server
