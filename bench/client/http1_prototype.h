// A minimal HTTP/1.1 keep-alive client over OpenSSL with blocking sockets: the floor of what a
// transport of our own would cost per request, for bench/client/request_cpu's comparison with
// libcurl (docs/benchmarks/client.md). One connection per
// Connection object (one per thread), TLS verified against the RestConfig's CA with the host name
// or IP checked, client certificate from the config, Content-Length and chunked answers. No
// proxies, gzip, timeouts or resend: a measuring prototype, not a transport.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/client/rest_config.h"
#include "pkg/util/result.h"

namespace kcm::bench {

struct PrototypeAnswer {
  int status = 0;
  std::string body;
};

// Shared TLS settings (an SSL_CTX) and the server's address, from a RestConfig.
class PrototypeClient {
 public:
  static Result<std::shared_ptr<PrototypeClient>> Create(const client::RestConfig& config);
  ~PrototypeClient();

  struct Impl;
  explicit PrototypeClient(std::unique_ptr<Impl> impl);
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One keep-alive connection, used by one thread; (re)connects when needed.
class PrototypeConnection {
 public:
  explicit PrototypeConnection(std::shared_ptr<PrototypeClient> client);
  ~PrototypeConnection();
  PrototypeConnection(const PrototypeConnection&) = delete;
  PrototypeConnection& operator=(const PrototypeConnection&) = delete;

  // `path` is the request target ("/api/v1/..."); headers are sent as given after Host.
  Result<PrototypeAnswer> Do(std::string_view method, std::string_view path,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             std::string_view body);

 private:
  struct State;
  std::shared_ptr<PrototypeClient> client_;
  std::unique_ptr<State> state_;
};

}  // namespace kcm::bench
