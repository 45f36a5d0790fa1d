// RestConfig: everything needed to reach one API server (rest.Config): endpoint, TLS material,
// credentials, client-side rate limit, user agent, timeout. Plain data; thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace kcm::client {

class TokenSource;

inline constexpr std::size_t kDefaultMaxObjectBytes = std::size_t{16} << 20;

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
  // When set, wins over bearer_token and bearer_token_file: every request asks it for the token
  // (e.g. ServiceAccountTokenSource for --use-service-account-credentials).
  std::shared_ptr<TokenSource> token_source;

  // Client-side token bucket (behaviour 1.4). qps == 0 means the client-go default (5 QPS, burst
  // 10); qps < 0 disables the limiter.
  float qps = 0;
  int burst = 0;

  std::string user_agent;  // empty = DefaultUserAgent()
  // rest.Config.ContentType (--kube-api-content-type): application/vnd.kubernetes.protobuf asks
  // for protobuf on the reads whose decoder has a protobuf form (LIST and WATCH of pods); ""
  // or application/json reads JSON. Writes are always JSON.
  std::string content_type;
  std::chrono::milliseconds timeout{0};  // per-request total timeout; 0 = none (not for watches)
  // rest.Config.DisableCompression: no Accept-Encoding: gzip on requests (watch streams never ask
  // for it). Off by default, as upstream: the API server then gzips answers over 128 KiB.
  bool disable_compression = false;

  // Deadlines, so that no request waits forever on a server that stopped answering.
  // TCP connect (client-go's dialer: 30 s).
  std::chrono::milliseconds connect_timeout{30000};
  // A non-watch transfer slower than stall_bytes_per_second for stall_timeout fails with cause
  // kTimedOut (the caller's usual retry/backoff follows). The API server answers every
  // non-long-running request within its --request-timeout (60 s by default, a 504 after that), so
  // 90 s of (next to) no progress means the server or the path to it is stuck.
  std::chrono::seconds stall_timeout{90};
  long stall_bytes_per_second = 1024;
  // A watch asked with timeoutSeconds=T is ended by the client at T + watch_timeout_margin: the
  // server closes it at T, so a stream still open then is stuck (see RestClient::Watch).
  std::chrono::seconds watch_timeout_margin{60};

  // The largest single object the client accepts: one watch frame, one GET/create/update/patch/
  // delete answer. etcd refuses requests over 1.5 MiB by default and kube-apiserver objects stay
  // under ~3 MiB, so 16 MiB leaves room for any real object while bounding what a broken or
  // hostile server can make us hold. LIST pages are not capped (their size is the cluster's).
  std::size_t max_object_bytes = kDefaultMaxObjectBytes;

  // The namespace of the selected kubeconfig context, informational ("" if none).
  std::string default_namespace;
};

inline constexpr float kDefaultQPS = 5;
inline constexpr int kDefaultBurst = 10;

}  // namespace kcm::client
