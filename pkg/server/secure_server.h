// SecureServer: the daemon's HTTPS endpoint for /metrics, /healthz, /livez and /readyz (spec
// daemon.md S1, S2). Health checks and the authorizer are set before Start; Start/Stop are called
// from one thread; checks run on the server's threads and must be thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::server {

struct ServingOptions {
  std::string bind_address = "0.0.0.0";
  int port = 10257;           // 0 = an ephemeral port (see SecureServer::Port)
  std::string tls_cert_file;  // PEM; both empty = a self-signed certificate made at start
  std::string tls_private_key_file;
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
};

// Decides whether a caller may read a path. The daemon plugs in delegated authentication and
// authorization (TokenReview + SubjectAccessReview); tests plug in a fake.
class RequestAuthorizer {
 public:
  enum class Decision { kAllow, kUnauthenticated, kForbidden };
  virtual ~RequestAuthorizer() = default;
  // `bearer_token` is empty when the request carried none.
  virtual Result<Decision> Authorize(std::string_view bearer_token, std::string_view verb,
                                     std::string_view path) = 0;
};

struct HealthCheck {
  std::string name;
  std::function<Status()> check;
};

class SecureServer {
 public:
  explicit SecureServer(ServingOptions options);
  ~SecureServer();
  SecureServer(const SecureServer&) = delete;
  SecureServer& operator=(const SecureServer&) = delete;

  // /healthz and /livez run the health checks; /readyz runs them plus the readiness checks.
  void AddHealthCheck(HealthCheck check);
  void AddReadyCheck(HealthCheck check);
  // Without an authorizer, paths outside always_allow_paths are served only on a loopback bind
  // address (S2: /metrics is never open to anyone unauthenticated off loopback).
  void SetAuthorizer(std::shared_ptr<RequestAuthorizer> authorizer);

  Status Start();
  void Stop();
  int Port() const;  // The bound port, after Start.

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcm::server
