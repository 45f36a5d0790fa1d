#include "pkg/client/rest_client.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

#include "pkg/client/api_errors.h"
#include "pkg/client/client_metrics.h"
#include "pkg/client/rate_limiter.h"
#include "pkg/client/token_source.h"
#include "pkg/client/transport.h"
#include "pkg/client/user_agent.h"
#include "pkg/client/watch_stream.h"
#include "pkg/metrics/first_write.h"

namespace kcm::client {
namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Only the integer-seconds form counts, as upstream (an HTTP-date is ignored).
std::optional<std::chrono::seconds> ParseRetryAfter(const std::string& v) {
  if (v.empty()) return std::nullopt;
  int64_t secs = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
  if (ec != std::errc() || ptr != v.data() + v.size() || secs < 0) return std::nullopt;
  return std::chrono::seconds(secs);
}

Error Canceled(std::string_view what) {
  return Error::Local(errors::reason::kCanceled, std::string(what) + " canceled");
}

// timeoutSeconds of a watch query, 0 when absent or unreadable.
int64_t WatchTimeoutSeconds(const QueryParams& query) {
  for (const auto& [k, v] : query) {
    if (k != "timeoutSeconds") continue;
    int64_t secs = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), secs);
    if (ec == std::errc() && ptr == v.data() + v.size() && secs > 0) return secs;
  }
  return 0;
}

}  // namespace

// Each metrics::*Vec::With builds a label map and looks the child up in its family (prometheus-cpp
// constructs a whole new Histogram, buckets and all, before finding the existing one): 2-3 % of
// the controller manager's CPU when done four times per request. The host label is this client's
// and the verbs and codes a client sees are few, so each child is resolved once and kept here,
// as metrics.h asks of hot paths. Children are made on first use, as before: /metrics shows the
// same series.
class RestClient::MetricHandles {
 public:
  explicit MetricHandles(std::string host) : host_(std::move(host)) {}

  metrics::Histogram RequestDuration(const std::string& verb) {
    return Find(request_duration_, verb, 0, [&] {
      return GetClientMetrics().request_duration.With({verb, host_});
    });
  }
  metrics::Histogram RateLimiterDuration(const std::string& verb) {
    return Find(rate_limiter_duration_, verb, 0, [&] {
      return GetClientMetrics().rate_limiter_duration.With({verb, host_});
    });
  }
  // code 0 = no HTTP answer (kErrorCodeLabel).
  metrics::Counter Requests(int code, const std::string& verb) {
    return Find(requests_, verb, code, [&] {
      return GetClientMetrics().requests_total.With({CodeLabel(code), verb, host_});
    });
  }
  metrics::Counter Retries(int code, const std::string& verb) {
    return Find(retries_, verb, code, [&] {
      return GetClientMetrics().request_retries_total.With({CodeLabel(code), verb, host_});
    });
  }

 private:
  template <class Handle>
  struct Entry {
    std::string verb;
    int code;
    Handle handle;
  };

  static std::string CodeLabel(int code) {
    return code == 0 ? std::string(kErrorCodeLabel) : std::to_string(code);
  }

  // A linear scan: a client meets a handful of (verb, code) pairs.
  template <class Handle, class Make>
  Handle Find(std::vector<Entry<Handle>>& entries, const std::string& verb, int code,
              const Make& make) {
    std::lock_guard lock(mu_);
    for (const Entry<Handle>& e : entries) {
      if (e.code == code && e.verb == verb) return e.handle;
    }
    Handle h = make();
    entries.push_back({verb, code, h});
    return h;
  }

  const std::string host_;
  std::mutex mu_;
  std::vector<Entry<metrics::Histogram>> request_duration_;       // guarded by mu_
  std::vector<Entry<metrics::Histogram>> rate_limiter_duration_;  // guarded by mu_
  std::vector<Entry<metrics::Counter>> requests_;                 // guarded by mu_
  std::vector<Entry<metrics::Counter>> retries_;                  // guarded by mu_
};

std::chrono::milliseconds RetryWait(std::chrono::seconds retry_after, int retry,
                                    const RetryPolicy& policy) {
  std::chrono::milliseconds backoff{0};
  if (policy.backoff_base.count() > 0 && retry > 0) {
    backoff = policy.backoff_base;
    for (int i = 1; i < retry && backoff < policy.backoff_cap; ++i) backoff *= 2;
    backoff = std::min(backoff, policy.backoff_cap);
  }
  return std::max<std::chrono::milliseconds>(retry_after, backoff);
}

Result<std::shared_ptr<RestClient>> RestClient::Create(const RestConfig& config) {
  return Create(config, Options{});
}

Result<std::shared_ptr<RestClient>> RestClient::Create(const RestConfig& config, Options options) {
  if (config.host.empty()) return Error::Local("InvalidConfig", "RestConfig.host is empty");
  auto transport = Transport::Create(config);
  if (!transport.ok()) return transport.error();
  auto client = std::make_shared<RestClient>(Private{}, config, options);
  client->transport_ = std::move(transport).value();
  return client;
}

RestClient::RestClient(Private, RestConfig config, Options options)
    : config_(std::move(config)),
      options_(options),
      clock_(options.clock != nullptr ? *options.clock : RealClock::Get()) {
  base_url_ = config_.host;
  if (base_url_.find("://") == std::string::npos) base_url_ = "https://" + base_url_;
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  const auto scheme_end = base_url_.find("://") + 3;
  host_label_ = base_url_.substr(scheme_end, base_url_.find('/', scheme_end) - scheme_end);
  user_agent_ = config_.user_agent.empty() ? DefaultUserAgent() : config_.user_agent;
  limiter_ = NewRateLimiter(config_.qps, config_.burst, clock_);
  tokens_ = config_.token_source != nullptr
                ? config_.token_source
                : std::make_shared<CachedFileTokenSource>(config_.bearer_token,
                                                          config_.bearer_token_file, clock_);
  metrics_ = std::make_unique<MetricHandles>(host_label_);
}

RestClient::~RestClient() = default;

Result<std::string> RestClient::BuildUrl(const Request& request) const {
  if (request.path.empty() || request.path.front() != '/') {
    return Error::Local("InvalidRequest", "request path must be absolute: " + request.path);
  }
  std::string url = base_url_ + request.path;
  const std::string query = EncodeQuery(request.query);
  if (!query.empty()) url += "?" + query;
  return url;
}

namespace {

Result<HttpRequest> MakeHttpRequest(const Request& request, std::string url,
                                    const std::string& user_agent, TokenSource& tokens,
                                    const RestConfig& config, bool watch) {
  auto token = tokens.Token();
  if (!token.ok()) return token.error();
  HttpRequest http;
  http.method = request.verb;
  http.url = std::move(url);
  http.body = request.body;  // a view: the caller's Request outlives the transfer
  http.connect_timeout = config.connect_timeout;
  http.max_body_bytes =
      request.max_body_bytes > 0 ? request.max_body_bytes : config.max_object_bytes;
  if (watch) {
    // No stall limit: a watch is legitimately silent between events. Its bound is the server's
    // own timeoutSeconds plus a margin (RestClient::Watch).
    if (const int64_t t = WatchTimeoutSeconds(request.query); t > 0) {
      http.timeout = std::chrono::seconds(t) + config.watch_timeout_margin;
    }
  } else {
    http.timeout = config.timeout;
    http.stall_timeout = config.stall_timeout;
    http.stall_bytes_per_second = config.stall_bytes_per_second;
    http.body_sink = request.body_sink;
  }
  http.headers.reserve(4);
  http.headers.emplace_back(
      "Accept", request.accept.empty() ? std::string(kContentTypeJSON) : request.accept);
  http.headers.emplace_back("User-Agent", user_agent);
  if (!request.body.empty()) {
    http.headers.emplace_back("Content-Type", request.content_type.empty()
                                                  ? std::string(kContentTypeJSON)
                                                  : request.content_type);
  }
  if (!token->empty()) http.headers.emplace_back("Authorization", "Bearer " + *token);
  return http;
}

}  // namespace

bool IsProtobufContentType(std::string_view content_type) {
  if (!content_type.starts_with(kContentTypeProtobuf)) return false;
  const std::string_view rest = content_type.substr(kContentTypeProtobuf.size());
  return rest.empty() || rest.front() == ';' || rest.front() == ' ';
}

Result<std::string> RestClient::Do(const Request& request, std::stop_token stop) {
  return Do(request, stop, nullptr);
}

RestClient::Verdict RestClient::Judge(const std::string& verb, Result<HttpResponse> resp,
                                      Attempts& attempts) {
  Verdict v;
  std::chrono::seconds retry_after{0};
  if (!resp.ok()) {
    metrics_->Requests(0, verb).Inc();
    // Only a GET is safe to resend when we cannot know whether the server acted on it
    // (upstream's IsRetryableErrorFunc for GET: a connection reset or a probable EOF). A
    // timeout is not retried here; the caller's backoff (the reflector's, the workqueue's)
    // decides.
    const bool retriable = verb == "GET" && errors::IsConnectionReset(resp.error());
    if (!retriable || attempts.retries >= options_.retry.max_retries) {
      v.result = resp.error();
      return v;
    }
    metrics_->Retries(0, verb).Inc();
  } else {
    const int status = resp->status;
    metrics_->Requests(status, verb).Inc();
    if (status >= 200 && status < 300) {
      v.content_type = std::move(resp->content_type);
      v.result = std::move(resp->body);
      return v;
    }
    if (status == 401 && tokens_->Refreshable() && !attempts.token_refreshed) {
      // A rotated or expired token: fetch it again and try once more at once.
      attempts.token_refreshed = true;
      tokens_->Invalidate();
      metrics_->Retries(status, verb).Inc();
      v.next = Verdict::Next::kRetryNow;
      return v;
    }
    // Upstream's checkWait: a 429 or a 5xx is retried only when the server said when, with a
    // Retry-After header; a bare 429 goes back to the caller as TooManyRequests.
    const auto parsed = ParseRetryAfter(resp->retry_after);
    const bool retriable = (status == 429 || (status >= 500 && status < 600)) && parsed;
    if (!retriable || attempts.retries >= options_.retry.max_retries) {
      v.result = DecodeApiError(status, resp->body);
      return v;
    }
    retry_after = parsed.value_or(std::chrono::seconds(0));
    metrics_->Retries(status, verb).Inc();
  }
  ++attempts.retries;
  v.next = Verdict::Next::kRetryAfter;
  v.wait = RetryWait(retry_after, attempts.retries, options_.retry);
  return v;
}

Result<std::string> RestClient::Do(const Request& request, std::stop_token stop,
                                   std::string* content_type) {
  auto url = BuildUrl(request);
  if (!url.ok()) return url.error();
  const std::string& verb = request.verb;
  Attempts attempts;
  while (true) {
    const auto wait_start = clock_.Now();
    if (auto st = limiter_->Wait(stop); !st.ok()) return st.error();
    metrics_->RateLimiterDuration(verb).Observe(Seconds(clock_.Now() - wait_start));
    // The limiter returns at once while it has tokens, whether or not stop was requested: check
    // here so no request is sent after the stop (writes fenced by a lost leader lease).
    if (stop.stop_requested()) return Canceled("request");

    auto http = MakeHttpRequest(request, *url, user_agent_, *tokens_, config_, /*watch=*/false);
    if (!http.ok()) return http.error();
    // The end point of the running reconcile's controller_reaction_duration_seconds: after the
    // rate limiter's wait, which is part of the controller's reaction time.
    if (verb != "GET" && verb != "HEAD") metrics::NoteWriteSent();
    const auto start = clock_.Now();
    auto resp = transport_->RoundTrip(*http, stop);
    metrics_->RequestDuration(verb).Observe(Seconds(clock_.Now() - start));

    Verdict v = Judge(verb, std::move(resp), attempts);
    if (v.next == Verdict::Next::kDone) {
      if (content_type != nullptr && v.result.ok()) *content_type = std::move(v.content_type);
      return std::move(v.result);
    }
    if (v.next == Verdict::Next::kRetryAfter && !clock_.SleepFor(v.wait, stop)) {
      return Canceled("request retry wait");
    }
  }
}

namespace {

// Counted down by each transfer of a DoAll round as it ends, on the loop; the waiter is woken
// once, when the last one did. Starts at one, the submitting thread's own count, so the round
// cannot end while requests are still being submitted. A mutex and condition variable, not a
// futex word: DoAll's wait also ends on a stop, and then on write_settle_grace.
class RoundLatch {
 public:
  void Add() {
    std::lock_guard lock(mu_);
    ++count_;
  }
  void CountDown() {
    std::lock_guard lock(mu_);
    if (--count_ == 0) ended_.notify_all();
  }
  // Until every transfer ended (true), or `stop` is requested first (false).
  bool Wait(std::stop_token stop) {
    std::unique_lock lock(mu_);
    return ended_.wait(lock, stop, [this] { return count_ == 0; });
  }
  // Until every transfer ended (true), or `timeout` passed first (false).
  bool WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return ended_.wait_for(lock, timeout, [this] { return count_ == 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable_any ended_;
  int count_ = 1;
};

}  // namespace

std::vector<CallAnswer> RestClient::DoAll(std::span<const Request> requests, std::stop_token stop) {
  // One request's state across its attempts, as Do keeps it in its locals.
  struct Call {
    std::string url;
    HttpRequest http;  // the attempt in flight: the transfer reads it until it ended
    std::unique_ptr<PendingRoundTrip> pending;
    Clock::time_point sent_at;
    Clock::time_point ended_at;    // stamped on the loop as the transfer ends
    Clock::time_point not_before;  // a retry's wait ends
    Attempts attempts;
  };
  std::vector<CallAnswer> answers(requests.size());
  std::vector<Call> calls(requests.size());
  std::vector<size_t> todo;
  todo.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    auto url = BuildUrl(requests[i]);
    if (!url.ok()) {
      answers[i].body = url.error();
    } else if (requests[i].body_sink != nullptr) {
      answers[i].body = Error::Local("InvalidRequest", "DoAll takes no body_sink");
    } else {
      calls[i].url = std::move(*url);
      todo.push_back(i);
    }
  }
  auto end = [&](size_t i, Result<std::string> result) { answers[i].body = std::move(result); };
  // Rounds: send every request due (retries in the order their waits end), wait once for all of
  // them, then judge each answer on this thread.
  while (!todo.empty()) {
    std::stable_sort(todo.begin(), todo.end(),
                     [&](size_t a, size_t b) { return calls[a].not_before < calls[b].not_before; });
    RoundLatch latch;
    // Cancels the round's writes in flight: a grace after `stop` (see the header); reads go with
    // `stop` itself.
    std::stop_source abandon;
    std::vector<size_t> sent;
    sent.reserve(todo.size());
    // The tokens of every request already due are reserved at once, in order, as upstream's
    // batch of goroutines each in the limiter's Wait would take them: a writer that comes later
    // (the event recorder, another worker) queues behind the whole batch. A retry still waiting
    // for its Retry-After takes its token when that wait ended.
    const Clock::time_point round_start = clock_.Now();
    std::vector<std::optional<Clock::time_point>> admission(todo.size());
    if (!stop.stop_requested()) {
      for (size_t k = 0; k < todo.size(); ++k) {
        if (calls[todo[k]].not_before <= round_start) admission[k] = limiter_->Reserve();
      }
    }
    // Hands back the reservations from `k` on that were not used and whose time has not come.
    auto unreserve_from = [&](size_t k) {
      const Clock::time_point now = clock_.Now();
      for (; k < todo.size(); ++k) {
        if (admission[k] && *admission[k] > now) limiter_->Unreserve();
        admission[k].reset();
      }
    };
    for (size_t k = 0; k < todo.size(); ++k) {
      const size_t i = todo[k];
      Call& c = calls[i];
      const Request& request = requests[i];
      if (stop.stop_requested()) {
        unreserve_from(k);
        end(i, Canceled(answers[i].sent ? "request retry wait" : "request"));
        continue;
      }
      Clock::time_point wait_start = round_start;
      if (admission[k]) {
        if (*admission[k] > clock_.Now() && !clock_.SleepUntil(*admission[k], stop)) {
          unreserve_from(k);
          end(i, Error::Local(errors::reason::kCanceled, "rate limiter wait canceled"));
          continue;
        }
      } else {
        if (c.not_before > clock_.Now() && !clock_.SleepUntil(c.not_before, stop)) {
          end(i, Canceled("request retry wait"));
          continue;
        }
        wait_start = clock_.Now();
        if (auto st = limiter_->Wait(stop); !st.ok()) {
          end(i, st.error());
          continue;
        }
      }
      metrics_->RateLimiterDuration(request.verb).Observe(Seconds(clock_.Now() - wait_start));
      // As in Do: no request is sent after the stop, even with a token at hand.
      if (stop.stop_requested()) {
        unreserve_from(k + 1);
        end(i, Canceled("request"));
        continue;
      }
      auto http = MakeHttpRequest(request, c.url, user_agent_, *tokens_, config_, false);
      if (!http.ok()) {
        end(i, http.error());
        continue;
      }
      c.http = std::move(*http);
      // This thread is the reconcile's own: its first-write probe sees the write, as Do's.
      if (request.verb != "GET" && request.verb != "HEAD") metrics::NoteWriteSent();
      answers[i].sent = true;
      c.sent_at = clock_.Now();
      latch.Add();
      // On the loop: stores and counts down, nothing more (`calls` is never resized).
      const bool write = request.verb != "GET" && request.verb != "HEAD";
      c.pending =
          transport_->Submit(c.http, write ? abandon.get_token() : stop, [this, &c, &latch] {
            c.ended_at = clock_.Now();
            latch.CountDown();
          });
      sent.push_back(i);
    }
    latch.CountDown();
    if (!latch.Wait(stop) && !latch.WaitFor(options_.write_settle_grace)) {
      abandon.request_stop();
      latch.Wait({});
    }
    todo.clear();
    for (size_t i : sent) {
      Call& c = calls[i];
      Result<HttpResponse> resp = c.pending->Wait();
      c.pending.reset();
      const std::string& verb = requests[i].verb;
      metrics_->RequestDuration(verb).Observe(Seconds(c.ended_at - c.sent_at));
      Verdict v = Judge(verb, std::move(resp), c.attempts);
      if (v.next == Verdict::Next::kDone) {
        end(i, std::move(v.result));
        continue;
      }
      c.not_before = clock_.Now() + v.wait;
      todo.push_back(i);
    }
  }
  return answers;
}

Result<std::unique_ptr<WatchStream>> RestClient::Watch(const Request& request,
                                                       std::stop_token stop) {
  const ClientMetrics& m = GetClientMetrics();
  auto url = BuildUrl(request);
  if (!url.ok()) return url.error();
  const auto wait_start = clock_.Now();
  if (auto st = limiter_->Wait(stop); !st.ok()) return st.error();
  m.rate_limiter_duration.With({request.verb, host_label_})
      .Observe(Seconds(clock_.Now() - wait_start));
  // The server ends a watch at its timeoutSeconds; a stream still open well after that is stuck
  // (a dead connection the keepalive probes did not catch, or a server that stopped writing).
  // client-go's reflector relies on that server-side timeout plus the HTTP/2 health check; our
  // bound is T + RestConfig::watch_timeout_margin. Bookmarks cannot serve as a heartbeat: only
  // the watch cache sends them (about once a minute), a watch served from etcd sends none.
  auto http = MakeHttpRequest(request, *url, user_agent_, *tokens_, config_, /*watch=*/true);
  if (!http.ok()) return http.error();
  auto on_status = [tokens = tokens_, counter_host = host_label_, verb = request.verb](int status) {
    GetClientMetrics().requests_total.With({std::to_string(status), verb, counter_host}).Inc();
    // The next attempt (the reflector re-watches) should not reuse a rejected token.
    if (status == 401) tokens->Invalidate();
  };
  return std::make_unique<WatchStream>(transport_->Stream(*http), std::move(on_status),
                                       config_.max_object_bytes);
}

}  // namespace kcm::client
