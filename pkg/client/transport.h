// HTTP/1.1 transport of our own over OpenSSL and non-blocking sockets (the http.RoundTripper of
// rest.Config): TLS from the RestConfig (CA, server name or IP checked, client certificate,
// sessions resumed), a keep-alive connection pool shared by all threads, gzip answers inflated,
// proxies from the environment as net/http reads them, and streaming responses for watches.
// Transport is thread-safe; an HttpStream is used by one reader thread, with Cancel() callable
// from any thread. Why not libcurl: docs/architecture.md, "Client transport".
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/client/rest_config.h"
#include "pkg/util/result.h"

namespace kcm::client {

// Receives the body of a 2xx answer as it arrives (a streamed LIST), instead of it being
// buffered.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // A 2xx answer starts; called before its first byte (also for an empty body), and again for
  // each retried attempt, which must forget what an earlier attempt delivered.
  virtual void Begin(std::string_view content_type) = 0;
  // The body's next bytes. An error aborts the transfer and is what RoundTrip returns.
  virtual Status Write(std::string_view data) = 0;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent when non-empty or for POST/PUT/PATCH. Not owned: RoundTrip's caller keeps it alive until
  // it returns (Stream copies it).
  std::string_view body;
  std::chrono::milliseconds timeout{0};  // total; 0 = none
  std::chrono::milliseconds connect_timeout{30000};
  // A transfer slower than stall_bytes_per_second for stall_timeout fails (cause kTimedOut);
  // stall_timeout 0 = no such limit (watches, which are legitimately silent).
  std::chrono::seconds stall_timeout{0};
  long stall_bytes_per_second = 1;
  // RoundTrip only: a body longer than this fails (cause kTooLarge); 0 = unlimited.
  std::size_t max_body_bytes = 0;
  // RoundTrip only: where a 2xx answer's body goes (HttpResponse::body then stays empty); other
  // answers (errors, whose Status body is decoded) are buffered as usual. Not owned.
  BodySink* body_sink = nullptr;
};

struct HttpResponse {
  int status = 0;
  std::string body;         // padded, see json_padding.h
  std::string retry_after;  // the Retry-After header, "" if absent
  std::string content_type;
};

// Like net/http's Transport, a request whose *reused* keep-alive connection turns out closed
// before any answer byte arrived is sent once more on a new connection, when nothing of it had
// been written or its method is replayable (GET, HEAD, OPTIONS, TRACE).
// Transport errors (no HTTP answer) come back as Error::Transport(cause, "<METHOD> <url>: <what
// failed>"): kConnectionRefused (no connection could be made), kDNS, kTimedOut (connect timeout,
// total timeout, stall limit), kConnectionReset (closed or reset once connected), kTLS (handshake
// or verification), kTooLarge (max_body_bytes), kOther.

class HttpStream;

class Transport {
 public:
  // Validates the TLS settings (files readable) and sets up the shared state.
  static Result<std::shared_ptr<Transport>> Create(const RestConfig& config);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // One request, the whole body buffered. A stop request aborts it (within about 100 ms, how
  // often a wait looks at the token) with reason "Canceled". A connect that takes
  // longer than connect_timeout, a transfer over `timeout`, or one under the stall limit fails
  // with cause kTimedOut.
  Result<HttpResponse> RoundTrip(const HttpRequest& request, std::stop_token stop = {});

  // Starts a request whose body is read incrementally (watch). Never blocks on the network.
  std::unique_ptr<HttpStream> Stream(const HttpRequest& request);

  struct Impl;

 private:
  struct Private {
    explicit Private() = default;
  };

 public:
  // Use Create(); public only so make_shared can reach it.
  Transport(Private, std::shared_ptr<Impl> impl);

 private:
  std::shared_ptr<Impl> impl_;
};

// A response read as it arrives, pull-based: Read() drives the transfer on the caller's thread.
class HttpStream {
 public:
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  // Appends newly received body bytes to *out. Returns the number appended; 0 means the response
  // ended cleanly (or Cancel() was called). Blocks until data, end, error or cancel.
  Result<size_t> Read(std::string* out);
  // The HTTP status; known once Read() has returned something (0 before).
  int status() const;
  std::string retry_after() const;
  // The Content-Type header; known once Read() has returned something. Call from the reading
  // thread.
  std::string content_type() const;
  // Thread-safe; makes a blocked Read() return 0 promptly.
  void Cancel();
  bool canceled() const;

  struct State;

 private:
  friend class Transport;
  struct Private {
    explicit Private() = default;
  };

 public:
  // Made by Transport::Stream().
  HttpStream(Private, std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

}  // namespace kcm::client
