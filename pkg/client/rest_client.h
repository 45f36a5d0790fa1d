// RestClient (rest.RESTClient): runs API requests against one server with the client-side rate
// limiter, bearer-token refresh on 401, retries on 429 or 5xx with a Retry-After header and on a
// GET's connection reset (behaviour 1.5; upstream's checkWait), the User-Agent (1.6), typed API
// errors (1.7), the deadlines and size limits of RestConfig, and the rest_client_* metrics (M2).
// Thread-safe: share one RestClient (one token bucket) per controller.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/client/request_path.h"
#include "pkg/client/rest_config.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::client {

class BodySink;
struct HttpResponse;
class RateLimiter;
class TokenSource;
class Transport;
class WatchStream;

inline constexpr std::string_view kContentTypeJSON = "application/json";
inline constexpr std::string_view kContentTypeProtobuf = "application/vnd.kubernetes.protobuf";
// What a protobuf-capable read asks for (client-go's AcceptContentTypes for built-in types): the
// server falls back to JSON for what it cannot encode as protobuf.
inline constexpr std::string_view kAcceptProtobufOrJSON =
    "application/vnd.kubernetes.protobuf, application/json";
// True for "application/vnd.kubernetes.protobuf" with or without parameters (";stream=watch").
bool IsProtobufContentType(std::string_view content_type);
inline constexpr std::string_view kContentTypeMergePatch = "application/merge-patch+json";
inline constexpr std::string_view kContentTypeJSONPatch = "application/json-patch+json";
inline constexpr std::string_view kContentTypeStrategicMergePatch =
    "application/strategic-merge-patch+json";

struct Request {
  std::string verb = "GET";  // HTTP method: GET, POST, PUT, PATCH, DELETE
  std::string path;          // absolute, e.g. from ResourcePath()
  QueryParams query;
  std::string body;
  std::string content_type;  // defaults to application/json when a body is sent
  std::string accept;        // the Accept header; "" = application/json
  // The largest answer body taken, counted inflated; 0 = RestConfig::max_object_bytes, the
  // bound of one object (every answer but a whole LIST is one: an object, a Status, a review,
  // /healthz's text). A streamed answer's items are bounded by its sink, and its whole body by
  // this too.
  std::size_t max_body_bytes = 0;
  // When set, a 2xx answer's body is handed to it as it arrives and Do returns "" (a streamed
  // LIST, transport.h); error answers are decoded as usual. Not owned.
  BodySink* body_sink = nullptr;
};

// How failed attempts are retried. The wait before retry n (1-based) is
// max(Retry-After, min(backoff_base * 2^(n-1), backoff_cap)).
struct RetryPolicy {
  int max_retries = 10;                       // retries after the first attempt (client-go: 10)
  std::chrono::milliseconds backoff_base{0};  // client-go's default is no backoff
  std::chrono::milliseconds backoff_cap{10000};
};

// What became of one request of RestClient::DoAll.
struct CallAnswer {
  // What RestClient::Do would have returned for it.
  Result<std::string> body = std::string();
  // False when the stop was requested before it was first sent: nothing reached the server
  // (`body` is then "Canceled").
  bool sent = false;
};

std::chrono::milliseconds RetryWait(std::chrono::seconds retry_after, int retry,
                                    const RetryPolicy& policy);

class RestClient {
 public:
  struct Options {
    Clock* clock = nullptr;  // nullptr = RealClock; used by the limiter, retries, token cache
    RetryPolicy retry;
    // DoAll: how long, in real time, writes already sent may still take to answer once the
    // caller's stop is requested, before they are abandoned (see DoAll).
    std::chrono::milliseconds write_settle_grace{5000};
  };

  static Result<std::shared_ptr<RestClient>> Create(const RestConfig& config);
  static Result<std::shared_ptr<RestClient>> Create(const RestConfig& config, Options options);
  ~RestClient();

  // Runs the request; returns the body of a 2xx answer (padded, see json_padding.h). A stop
  // request cancels waiting in the limiter, the request in flight, or the wait between retries
  // (reason "Canceled"). Unlike DoAll, a write in flight is canceled at once too: what goes
  // through Do is named or idempotent (status updates, ReplicaSets by their template's hash,
  // Leases, deletes), so a copy the server still carries out is refused or harmless; creates by
  // generateName (pods) go through DoAll.
  Result<std::string> Do(const Request& request, std::stop_token stop = {});
  // As above; *content_type receives the answer's Content-Type (for a negotiated Accept).
  Result<std::string> Do(const Request& request, std::stop_token stop, std::string* content_type);

  // Runs `requests` at once from the calling thread, each with Do's semantics (limiter, retries,
  // token refresh, metrics, the stop checked before every send), and returns once every one
  // ended, their answers in the order of `requests` (docs/design/client-transport.md, "Rate
  // limiting without threads"). This thread takes each request's limiter token in order and
  // hands the request to the transport's loop, so a batch waits on the limiter with one thread,
  // not one a request; it then waits once for the batch, and sends the retries the answers ask
  // for (after their waits) the same way. Once `stop` is requested no request is sent any more:
  // those never sent come back with `sent` false. Reads in flight are canceled at once; writes in
  // flight get up to Options::write_settle_grace to answer: a canceled create may still be
  // carried out by the server, and a replica handing its namespaces over must not leave one
  // behind for the new owner's fresh caches to miss (a pod created twice). No `body_sink` (a
  // streamed LIST is read on its caller's thread: use Do).
  std::vector<CallAnswer> DoAll(std::span<const Request> requests, std::stop_token stop = {});

  // Starts a watch (goes through the limiter first). HTTP errors surface from the stream's first
  // Next(); bodyless transport failures too. With timeoutSeconds=T in the query the client ends
  // the stream itself at T + RestConfig::watch_timeout_margin (cause kTimedOut); frames over
  // RestConfig::max_object_bytes end it with cause kTooLarge.
  Result<std::unique_ptr<WatchStream>> Watch(const Request& request, std::stop_token stop = {});

  const RestConfig& config() const { return config_; }
  RateLimiter& rate_limiter() { return *limiter_; }
  // host:port as used in the metrics' `host` label.
  const std::string& host() const { return host_label_; }

 private:
  struct Private {
    explicit Private() = default;
  };

 public:
  // Use Create(); public only so make_shared can reach it.
  RestClient(Private, RestConfig config, Options options);

 private:
  Result<std::string> BuildUrl(const Request& request) const;

  // One request's retries so far, kept across its attempts (Do's locals, a DoAll call's).
  struct Attempts {
    int retries = 0;
    bool token_refreshed = false;  // a 401 has been retried once with a fresh token
  };
  // What an attempt's answer asks for next: done (its result and Content-Type), a retry at once
  // (a 401 with a fresh token) or a retry after `wait`. Counts the attempt in the metrics and the
  // retry in `attempts`, as upstream's request.go does.
  struct Verdict {
    enum class Next { kDone, kRetryNow, kRetryAfter } next = Next::kDone;
    Result<std::string> result = std::string();
    std::string content_type;
    std::chrono::milliseconds wait{0};
  };
  Verdict Judge(const std::string& verb, Result<HttpResponse> resp, Attempts& attempts);

  // The rest_client_* children this client has used, by verb and code (rest_client.cc).
  class MetricHandles;

  RestConfig config_;
  Options options_;
  Clock& clock_;
  std::string base_url_;
  std::string host_label_;
  std::string user_agent_;
  std::shared_ptr<Transport> transport_;
  std::unique_ptr<RateLimiter> limiter_;
  std::shared_ptr<TokenSource> tokens_;
  std::unique_ptr<MetricHandles> metrics_;
};

}  // namespace kcm::client
