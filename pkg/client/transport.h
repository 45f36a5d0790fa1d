// The HTTP transport over libcurl (the http.RoundTripper of rest.Config): TLS from the RestConfig
// (CA, server name or IP checked, client certificate, sessions resumed), keep-alive connections
// (every transfer on the process's event loop, internal/event_loop.h; a watch's or streamed
// LIST's bytes handed to its reader's thread in a byte channel), gzip answers inflated, proxies
// from the environment as net/http reads them, and streaming responses for watches. Every answer is
// bounded (answer_head.h): inflated body, head bytes, interim answers, Content-Length, stalls.
// Transport is thread-safe; an HttpStream is used by one reader thread, with Cancel() callable
// from any thread. How it is configured and why: docs/design/client-transport.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
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
  // The largest 2xx body (counted inflated), buffered or given to body_sink; a longer one fails
  // with cause kTooLarge as soon as it passes the limit (a Content-Length over it, before the
  // first byte). Every answer has one: this default, or the caller's (RestClient sets
  // RestConfig::max_object_bytes). A Stream's body is not bounded as a whole, only a
  // Content-Length it announces: its frames are, one by one. An error (non-2xx) answer's body is
  // read to internal::kMaxErrorBodyBytes (64 KiB) and no further.
  std::size_t max_body_bytes = kDefaultMaxObjectBytes;
  // RoundTrip only: where a 2xx answer's body goes (HttpResponse::body then stays empty); error
  // answers are buffered as usual. The sink bounds what it keeps (a LIST item's limit). Not
  // owned.
  BodySink* body_sink = nullptr;
};

struct HttpResponse {
  int status = 0;
  std::string body;         // padded, see json_padding.h
  std::string retry_after;  // the Retry-After header, "" if absent
  std::string content_type;
};

// Like net/http's Transport, libcurl sends a request once more on a new connection when a
// *reused* keep-alive connection turns out closed before any answer byte arrived.
// Transport errors (no usable HTTP answer) come back as Error::Transport(cause, "<METHOD> <url>:
// <what failed>"): kConnectionRefused (no connection could be made), kDNS, kTimedOut (connect
// timeout, total timeout, stall limit), kConnectionReset (closed or reset once connected), kTLS
// (handshake or verification), kTooLarge (max_body_bytes), kOther (a malformed or unbounded
// answer: a bad Content-Length, too many interim answers, a head over its limit).

class HttpStream;
class PendingRoundTrip;

class Transport {
 public:
  // Validates the TLS settings (files readable), reads the proxy environment once, and sets up
  // the shared state.
  static Result<std::shared_ptr<Transport>> Create(const RestConfig& config);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // One request, the whole body buffered (or handed to request.body_sink). A stop request
  // aborts it promptly (it wakes the transfer's poll) with reason "Canceled". A connect that
  // takes longer than connect_timeout, a transfer over `timeout`, or one under the stall limit
  // fails with cause kTimedOut.
  Result<HttpResponse> RoundTrip(const HttpRequest& request, std::stop_token stop = {});

  // Starts a request on the loop and returns at once (docs/design/client-transport.md, "The API
  // callers see"): RoundTrip without the wait, for a caller with many requests in flight (a
  // slow-start batch). `on_done` runs once when the transfer ended or was canceled, on the loop
  // (or on this thread before Submit returns, when the request never reached the loop): it must
  // only store, count down or wake, never block or log. `request` (with its body) is not copied:
  // the caller keeps it alive until the PendingRoundTrip is waited for or destroyed. A
  // `body_sink` is not allowed here (its bytes would be fed on the loop). A stop request cancels
  // the transfer as RoundTrip's does.
  std::unique_ptr<PendingRoundTrip> Submit(const HttpRequest& request, std::stop_token stop,
                                           std::function<void()> on_done);

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

// A request started by Transport::Submit. Destroying it before Wait cancels a transfer still
// running and waits for its end (the handle goes back to the pool only then).
class PendingRoundTrip {
 public:
  ~PendingRoundTrip();
  PendingRoundTrip(const PendingRoundTrip&) = delete;
  PendingRoundTrip& operator=(const PendingRoundTrip&) = delete;

  // Blocks until the transfer ended (at once after `on_done` ran) and returns its answer as
  // RoundTrip would have. Call once.
  Result<HttpResponse> Wait();

  struct State;

 private:
  struct Private {
    explicit Private() = default;
  };

 public:
  // Made by Transport::Submit().
  PendingRoundTrip(Private, std::unique_ptr<State> state);

 private:
  friend class Transport;
  std::unique_ptr<State> state_;
};

// A response read as it arrives: the loop runs the transfer and Read() takes what its byte
// channel holds (at most 1 MiB and a chunk: a reader slower than the server pauses the transfer
// until it took them).
class HttpStream {
 public:
  ~HttpStream();
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  // Appends newly received body bytes of a 2xx answer to *out. Returns the number appended; 0
  // means the response ended cleanly (or Cancel() was called). Blocks until data, end, error or
  // cancel. An error (non-2xx) answer's body is not handed over: Read returns 0 once it has been
  // read, within its bound, into error_body().
  Result<size_t> Read(std::string* out);
  // The first bytes of an error answer's body (internal::kMaxErrorBodyBytes at most; the rest is
  // not read), once Read() has returned 0 for it.
  const std::string& error_body() const;
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
