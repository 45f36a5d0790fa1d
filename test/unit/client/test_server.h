// TestServer: a scripted HTTP/1.1 (optionally TLS) server on 127.0.0.1 with an ephemeral port for
// client tests. One accept thread and one thread per connection; a test-supplied handler answers
// each request (whole bodies, chunked streams, delays, abrupt closes). Thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace kcm::testing {

struct RecordedRequest {
  std::string method;
  std::string target;  // path?query as sent
  std::string path;
  std::string query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string client_cert_cn;  // TLS client certificate subject CN, "" if none

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// One accepted connection, as the handler sees it.
class Conn {
 public:
  virtual ~Conn() = default;
  // A complete response with Content-Length (Content-Type application/json unless given).
  void Respond(int status, std::string_view body, const Headers& headers = {});
  // A chunked response: head, then chunks, then the terminating chunk.
  void StartChunked(int status, const Headers& headers = {});
  void Chunk(std::string_view data);
  void EndChunked();
  // Closes the socket at once (no terminating chunk, no close_notify).
  void Close();
  // Blocks until the client closes the connection or the server stops (plain HTTP only).
  void HoldOpen();
  bool closed() const { return closed_; }

  virtual bool WriteAll(std::string_view data) = 0;
  // Reads some bytes; 0 on EOF/error.
  virtual long ReadSome(char* buf, std::size_t n) = 0;
  virtual int fd() const = 0;

 protected:
  bool closed_ = false;
};

struct TlsOptions {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // non-empty: ask for a client certificate signed by it
  bool require_client_cert = false;
};

class TestServer {
 public:
  using Handler = std::function<void(const RecordedRequest&, Conn&)>;

  explicit TestServer(Handler handler, std::optional<TlsOptions> tls = std::nullopt);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // "http://127.0.0.1:<port>" or "https://127.0.0.1:<port>".
  std::string url() const;
  int port() const { return port_; }
  std::vector<RecordedRequest> requests() const;
  int connections() const { return connections_.load(); }
  // TLS connections whose handshake resumed an earlier session.
  int resumed_sessions() const { return resumed_sessions_.load(); }
  bool stopping() const { return stopping_.load(); }

 private:
  struct TlsContext;
  void AcceptLoop();
  void Serve(int fd);

  Handler handler_;
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> resumed_sessions_{0};
  mutable std::mutex mu_;
  std::vector<RecordedRequest> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> conn_threads_;
  std::thread accept_thread_;
};

// A fresh temporary directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Test PKI made with the openssl CLI in a temporary directory: a CA, a server certificate for
// IP 127.0.0.1 signed by it, a client certificate (CN "test-client") signed by it, and an
// unrelated CA.
struct TestPki {
  TempDir dir;
  std::string ca_crt, ca_key;
  std::string server_crt, server_key;
  std::string client_crt, client_key;
  std::string other_ca_crt;

  // Generated once per process; nullptr (with a message on stderr) if openssl failed.
  static const TestPki* Get();
};

// `prefix` and then `inflated` bytes of `fill`, gzip-compressed: an answer body that inflates to
// hundreds of times its size (a gzip bomb).
std::string GzipBomb(std::size_t inflated, std::string_view prefix = {}, char fill = '\0');

std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, std::string_view content);

}  // namespace kcm::testing
