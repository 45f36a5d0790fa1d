// Low-level clients for pkg/server tests: raw TCP connections, a captured TLS ClientHello, and a
// blocking OpenSSL client that can pick its protocol version, cipher list and client certificate
// and send bytes as slowly as a test wants. Plus a test PKI made with the openssl CLI. Each object
// is used from one thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kcm::server::testing {

struct HttpsResponse {
  long code = 0;  // 0 = no answer
  std::string body;
  std::string content_type;
  std::chrono::milliseconds took{0};
};

struct GetOptions {
  std::string token;
  std::string cert_file;  // client certificate and key (PEM files)
  std::string key_file;
  std::vector<std::string> headers;  // "Name: value"
  long timeout_ms = 20000;
  std::string method = "GET";
  std::string body;  // sent as is (PUT, POST)
};

// <method> https://127.0.0.1:<port><path> through pkg/client's Transport, a new connection each
// time (server certificate not verified).
HttpsResponse HttpsGet(int port, const std::string& path, const GetOptions& options = {});

// A blocking TCP connection to 127.0.0.1:port (-1 on failure). Receive timeout 3 s.
int ConnectTcp(int port);

// The bytes of a TLS ClientHello, as a real client would send first.
std::string ClientHelloBytes();

// Waits up to `limit` for the peer to close `fd` (read returns 0 or an error): true if it did.
bool WaitPeerClosed(int fd, std::chrono::milliseconds limit);

class TlsClient {
 public:
  struct Options {
    int max_version = 0;  // e.g. TLS1_2_VERSION; 0 = the library's maximum
    std::string ciphers;  // TLS 1.2 cipher list; "" = the library's default
    std::string cert_file;
    std::string key_file;
  };
  TlsClient(int port, const Options& options);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  bool handshake_ok() const { return handshake_ok_; }
  bool Write(std::string_view data);
  // One HTTP response (head + Content-Length body), or "" when the peer closed first or
  // `limit` passed.
  std::string ReadResponse(std::chrono::milliseconds limit);
  // Waits up to `limit` for the server to close the connection.
  bool WaitClosed(std::chrono::milliseconds limit);

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool handshake_ok_ = false;
};

// Certificates made with the openssl CLI in a private temporary directory (removed at
// destruction). Each Make* returns {cert, key} file paths, or empty strings on failure.
class TestCerts {
 public:
  TestCerts();
  ~TestCerts();
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  struct Pair {
    std::string cert;
    std::string key;
  };
  Pair MakeCA(const std::string& name);
  // A client certificate (extendedKeyUsage clientAuth) with subject `subject`, e.g.
  // "/O=team-a/CN=alice", signed by `ca`.
  Pair MakeClientCert(const std::string& name, const std::string& subject, const Pair& ca);

 private:
  std::string dir_;
};

}  // namespace kcm::server::testing
