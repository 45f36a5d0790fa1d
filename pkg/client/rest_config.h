// RestConfig: everything needed to reach one API server (rest.Config): endpoint, TLS material,
// credentials, client-side rate limit, user agent, timeout. Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <string>

namespace kcm::client {

struct RestConfig {
  // Base URL, "https://host:port" (a bare "host:port" is taken as https).
  std::string host;

  // TLS. *_data fields hold PEM text (already base64-decoded when loaded from a kubeconfig) and
  // win over the matching *_file.
  std::string ca_file;
  std::string ca_data;
  std::string cert_file;
  std::string cert_data;
  std::string key_file;
  std::string key_data;
  bool insecure = false;  // insecure-skip-tls-verify

  // Credentials. When bearer_token_file is set it is re-read (projected tokens rotate) and wins
  // over bearer_token, which stays the fallback if the file cannot be read.
  std::string bearer_token;
  std::string bearer_token_file;

  // Client-side token bucket (spec 1.4). qps == 0 means the client-go default (5 QPS, burst 10);
  // qps < 0 disables the limiter.
  float qps = 0;
  int burst = 0;

  std::string user_agent;                // empty = DefaultUserAgent()
  std::chrono::milliseconds timeout{0};  // per-request total timeout; 0 = none (not for watches)
  bool enable_http2 = true;              // offer h2 over TLS (ALPN); HTTP/1.1 otherwise

  // The namespace of the selected kubeconfig context, informational ("" if none).
  std::string default_namespace;
};

inline constexpr float kDefaultQPS = 5;
inline constexpr int kDefaultBurst = 10;

}  // namespace kcm::client
