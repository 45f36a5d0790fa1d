#include "pkg/client/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "pkg/client/api_errors.h"
#include "pkg/client/client_metrics.h"
#include "pkg/client/json_padding.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/transport.h"
#include "pkg/client/user_agent.h"
#include "pkg/metrics/first_write.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::Conn;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RecordedRequest;
using testing::TestServer;

std::shared_ptr<RestClient> NewClient(const std::string& url, RestClient::Options opts = {},
                                      float qps = -1) {
  RestConfig config{.host = url, .qps = qps};
  auto c = RestClient::Create(config, opts);
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : nullptr;
}

const GroupVersionResource kPods{"", "v1", "pods"};
const GroupVersionResource kDeployments{"apps", "v1", "deployments"};

// 1.5 a 429 is retried (after Retry-After) until it succeeds.
TEST(RestClientRetryTest, RetriesTooManyRequests) {
  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    if (++calls <= 2) {
      c.Respond(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests"})",
                {{"Retry-After", "0"}});
    } else {
      c.Respond(200, R"({"kind":"Pod"})");
    }
  });
  auto client = NewClient(server.url());
  const auto& m = GetClientMetrics();
  auto retries = m.request_retries_total.With({"429", "GET", client->host()});
  const double before = retries.Value();
  auto r = client->Do({.path = "/api/v1/namespaces/d/pods/p"});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(*r, R"({"kind":"Pod"})");
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(retries.Value() - before, 2);
}

// 1.5 as upstream's checkWait: a 429 without a Retry-After header is not retried; the caller
// gets TooManyRequests at once (and its own backoff decides).
TEST(RestClientRetryTest, TooManyRequestsWithoutRetryAfterNotRetried) {
  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    ++calls;
    c.Respond(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"no"})");
  });
  auto client = NewClient(server.url());
  auto r = client->Do({.path = "/api/v1/namespaces/d/pods/p"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsTooManyRequests(r.error())) << r.error().ToString();
  EXPECT_EQ(calls.load(), 1);
}

// 1.5 a 5xx is retried only with an integer Retry-After.
TEST(RestClientRetryTest, ServerErrorRetriedOnlyWithRetryAfter) {
  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest& r, Conn& c) {
    ++calls;
    if (r.path == "/no-retry-after") {
      c.Respond(500, "boom");
    } else if (r.path == "/date-retry-after") {
      c.Respond(503, "busy", {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}});
    } else {
      c.Respond(calls == 1 ? 503 : 200, "{}", {{"Retry-After", "0"}});
    }
  });
  auto client = NewClient(server.url());
  auto r = client->Do({.path = "/no-retry-after"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsInternalError(r.error()));
  EXPECT_EQ(calls.load(), 1);
  calls = 0;
  r = client->Do({.path = "/date-retry-after"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 503);
  EXPECT_EQ(calls.load(), 1);
  calls = 0;
  EXPECT_TRUE(client->Do({.path = "/ok-after-one"}).ok());
  EXPECT_EQ(calls.load(), 2);
}

// 1.5 the client gives up after max_retries retries and returns the last error.
TEST(RestClientRetryTest, GivesUpAfterMaxRetries) {
  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    ++calls;
    c.Respond(429, R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"slow"})",
              {{"Retry-After", "0"}});
  });
  auto client = NewClient(server.url());  // default policy: 10 retries
  auto r = client->Do({.verb = "POST", .path = "/api/v1/namespaces/d/pods", .body = "{}"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsTooManyRequests(r.error()));
  EXPECT_EQ(r.error().message, "slow");
  EXPECT_EQ(calls.load(), 11);
}

// 1.5 the wait before a retry is max(Retry-After, backoff), taken on the client's clock.
TEST(RestClientRetryTest, WaitIsMaxOfRetryAfterAndBackoff) {
  RetryPolicy p{.max_retries = 10,
                .backoff_base = std::chrono::milliseconds(100),
                .backoff_cap = std::chrono::milliseconds(1000)};
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  EXPECT_EQ(RetryWait(seconds(0), 1, p), milliseconds(100));
  EXPECT_EQ(RetryWait(seconds(0), 3, p), milliseconds(400));
  EXPECT_EQ(RetryWait(seconds(0), 9, p), milliseconds(1000));
  EXPECT_EQ(RetryWait(seconds(2), 3, p), milliseconds(2000));
  EXPECT_EQ(RetryWait(seconds(1), 1, RetryPolicy{}), milliseconds(1000));

  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.Respond(++calls == 1 ? 429 : 200, "{}", {{"Retry-After", "5"}});
  });
  FakeClock clock;
  auto client = NewClient(server.url(), {.clock = &clock});
  const auto start = clock.Now();
  std::thread t([&] { EXPECT_TRUE(client->Do({.path = "/x"}).ok()); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  EXPECT_EQ(calls.load(), 1);
  clock.Step(std::chrono::seconds(5));
  t.join();
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(clock.Now() - start, std::chrono::seconds(5));
}

// 1.5 a GET is retried when the connection breaks; a POST is not (it may have been applied).
TEST(RestClientRetryTest, GetRetriedOnConnectionReset) {
  std::atomic<int> calls{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    if (++calls % 2 == 1) {
      c.Close();
    } else {
      c.Respond(200, "{}");
    }
  });
  auto client = NewClient(server.url());
  EXPECT_TRUE(client->Do({.path = "/api/v1/pods"}).ok());
  EXPECT_EQ(calls.load(), 2);
  calls = 0;
  // A fresh client: libcurl itself resends on a *reused* connection that died before answering.
  auto r = NewClient(server.url())
               ->Do({.verb = "POST", .path = "/api/v1/namespaces/d/pods", .body = "{}"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 0);
  EXPECT_EQ(r.error().transport, TransportCause::kConnectionReset) << r.error().ToString();
  EXPECT_EQ(calls.load(), 1);
}

// 1.5 a stop request ends a retry wait.
TEST(RestClientRetryTest, StopCancelsRetryWait) {
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.Respond(429, "{}", {{"Retry-After", "60"}});
  });
  FakeClock clock;
  auto client = NewClient(server.url(), {.clock = &clock});
  std::stop_source stop;
  Result<std::string> result = Error{};
  std::thread t([&] { result = client->Do({.path = "/x"}, stop.get_token()); });
  ASSERT_TRUE(clock.WaitForWaiters(1));
  stop.request_stop();
  t.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, errors::reason::kCanceled);
}

// A stop also aborts a request the server never answers (no request timeout configured):
// informers must be able to shut down while a LIST hangs.
TEST(RestClientRetryTest, StopCancelsARequestInFlight) {
  std::atomic<bool> received{false};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    received = true;
    c.HoldOpen();
  });
  auto client = NewClient(server.url(), {});
  std::stop_source stop;
  Result<std::string> result = std::string();
  std::thread t([&] { result = client->Do({.path = "/x"}, stop.get_token()); });
  while (!received) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  stop.request_stop();
  t.join();  // hangs (test timeout) if the transfer ignores the stop
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().reason, errors::reason::kCanceled);
}

// 1.6 the User-Agent: default form, per-controller suffix, and the header on the wire.
TEST(RestClientTest, UserAgent) {
  EXPECT_EQ(DefaultUserAgent({.version = "v1.31.2-rc.1", .commit = "0123456789abcdef"}),
            "kube-controller-manager/v1.31.2 (linux/amd64) kubernetes/0123456");
  EXPECT_EQ(DefaultUserAgent({.binary = "/usr/local/bin/kcm", .os = "linux", .arch = "arm64"}),
            "kcm/unknown (linux/arm64) kubernetes/unknown");
  const std::string ua = AddUserAgent(DefaultUserAgent({.version = "v1.31.0", .commit = "abcdef0"}),
                                      "deployment-controller");
  EXPECT_EQ(ua,
            "kube-controller-manager/v1.31.0 (linux/amd64) kubernetes/abcdef0/"
            "deployment-controller");

  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = RestClient::Create({.host = server.url(), .qps = -1, .user_agent = ua});
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Do({.path = "/api"}).ok());
  EXPECT_EQ(server.requests().at(0).Header("user-agent"), ua);
  EXPECT_EQ(server.requests().at(0).Header("accept"), "application/json");
}

// 1.7 an error answer comes back as a typed kcm::Error.
TEST(RestClientTest, ApiErrorsDecoded) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.path.ends_with("/missing")) {
      c.Respond(404, R"({"kind":"Status","apiVersion":"v1","status":"Failure",
        "message":"pods \"missing\" not found","reason":"NotFound",
        "details":{"name":"missing","kind":"pods"},"code":404})");
    } else {
      c.Respond(409, "conflict, said a proxy", {{"Content-Type", "text/plain"}});
    }
  });
  ResourceClient pods(NewClient(server.url()), kPods, true);
  auto r = pods.Get("d", "missing");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsNotFound(r.error()));
  EXPECT_EQ(r.error().message, "pods \"missing\" not found");
  r = pods.Update("d", "p", "{}");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsConflict(r.error()));
  EXPECT_THAT(r.error().message, HasSubstr("conflict, said a proxy"));
}

// Paths, query parameters, verbs, content types and bodies on the wire.
TEST(ResourceClientTest, RequestsOnTheWire) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = NewClient(server.url());
  ResourceClient pods(client, kPods, true);
  ResourceClient deployments(client, kDeployments, true);
  ResourceClient nodes(client, {"", "v1", "nodes"}, false);

  ASSERT_TRUE(pods.Get("ns1", "p1", {.resource_version = "0"}).ok());
  ASSERT_TRUE(deployments
                  .List("", {.label_selector = "app in (a,b),tier!=x",
                             .resource_version = "10",
                             .resource_version_match = "NotOlderThan",
                             .limit = 5,
                             .timeout_seconds = 30})
                  .ok());
  ASSERT_TRUE(nodes.Get("ignored", "n1").ok());
  ASSERT_TRUE(
      deployments
          .Create("ns1", R"({"kind":"Deployment"})", {.dry_run = true, .field_manager = "kcm"})
          .ok());
  ASSERT_TRUE(deployments.UpdateStatus("ns1", "d1", "{}").ok());
  ASSERT_TRUE(pods.Patch("ns1", "p1", PatchType::kMergePatch, R"({"metadata":{}})").ok());
  ASSERT_TRUE(pods.Patch("ns1", "p1", PatchType::kJSONPatch, "[]", {}, "status").ok());
  ASSERT_TRUE(deployments.Patch("ns1", "d1", PatchType::kStrategicMergePatch, "{}").ok());
  ASSERT_TRUE(pods.Delete("ns1", "p1",
                          {.grace_period_seconds = 0,
                           .precondition_uid = "u-1",
                           .precondition_resource_version = "7",
                           .propagation_policy = PropagationPolicy::kBackground})
                  .ok());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 9u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].target, "/api/v1/namespaces/ns1/pods/p1?resourceVersion=0");
  EXPECT_EQ(reqs[1].target,
            "/apis/apps/v1/deployments?labelSelector=app+in+%28a%2Cb%29%2Ctier%21%3Dx&limit=5"
            "&resourceVersion=10&resourceVersionMatch=NotOlderThan&timeoutSeconds=30");
  EXPECT_EQ(reqs[2].target, "/api/v1/nodes/n1");
  EXPECT_EQ(reqs[3].method, "POST");
  EXPECT_EQ(reqs[3].target, "/apis/apps/v1/namespaces/ns1/deployments?dryRun=All&fieldManager=kcm");
  EXPECT_EQ(reqs[3].Header("content-type"), "application/json");
  EXPECT_EQ(reqs[3].body, R"({"kind":"Deployment"})");
  EXPECT_EQ(reqs[4].method, "PUT");
  EXPECT_EQ(reqs[4].target, "/apis/apps/v1/namespaces/ns1/deployments/d1/status");
  EXPECT_EQ(reqs[5].method, "PATCH");
  EXPECT_EQ(reqs[5].Header("content-type"), "application/merge-patch+json");
  EXPECT_EQ(reqs[6].target, "/api/v1/namespaces/ns1/pods/p1/status");
  EXPECT_EQ(reqs[6].Header("content-type"), "application/json-patch+json");
  EXPECT_EQ(reqs[7].Header("content-type"), "application/strategic-merge-patch+json");
  EXPECT_EQ(reqs[8].method, "DELETE");
  EXPECT_EQ(
      reqs[8].body,
      R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,)"
      R"("preconditions":{"uid":"u-1","resourceVersion":"7"},"propagationPolicy":"Background"})");
}

// 1.6 the header lines a request is sent with, one after another on one pooled handle: each
// request carries exactly its own Accept, User-Agent, Content-Type and Authorization, never an
// Expect (no 100-continue wait, also for a body over libcurl's 1 MiB threshold for it); a POST
// without a body sends an empty one.
TEST(RestClientTest, HeaderLinesOfEachRequest) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = RestClient::Create(
      {.host = server.url(), .bearer_token = "t0k3n", .qps = -1, .user_agent = "ua/1 (x)"});
  ASSERT_TRUE(client.ok());
  const std::string big(2 << 20, 'b');
  ASSERT_TRUE((*client)
                  ->Do({.verb = "PUT",
                        .path = "/a",
                        .body = big,
                        .content_type = std::string(kContentTypeMergePatch),
                        .accept = std::string(kAcceptProtobufOrJSON)})
                  .ok());
  ASSERT_TRUE((*client)->Do({.verb = "POST", .path = "/b"}).ok());
  ASSERT_TRUE((*client)->Do({.path = "/c"}).ok());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(reqs[0].body.size(), big.size());
  EXPECT_TRUE(reqs[0].body == big);
  EXPECT_EQ(reqs[0].Header("content-type"), kContentTypeMergePatch);
  EXPECT_EQ(reqs[0].Header("accept"), kAcceptProtobufOrJSON);
  EXPECT_EQ(reqs[1].method, "POST");
  EXPECT_EQ(reqs[1].body, "");
  EXPECT_EQ(reqs[1].Header("content-length"), "0");
  EXPECT_EQ(reqs[1].Header("content-type"), "");
  EXPECT_EQ(reqs[2].Header("content-type"), "");
  for (const RecordedRequest& r : reqs) {
    EXPECT_EQ(r.Header("user-agent"), "ua/1 (x)") << r.path;
    EXPECT_EQ(r.Header("authorization"), "Bearer t0k3n") << r.path;
    EXPECT_EQ(r.Header("expect"), "") << r.path;
  }
  EXPECT_EQ(reqs[1].Header("accept"), "application/json");
  EXPECT_EQ(reqs[2].Header("accept"), "application/json");
}

// One client reuses one pooled libcurl handle for sequential requests without resetting it: no
// option of a request (verb, body, content type) carries over to the next.
TEST(RestClientTest, PooledHandleForgetsThePreviousRequest) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = NewClient(server.url());
  ASSERT_TRUE(client->Do({.verb = "PUT", .path = "/a", .body = R"({"put":1})"}).ok());
  ASSERT_TRUE(client->Do({.verb = "GET", .path = "/b"}).ok());
  ASSERT_TRUE(client->Do({.verb = "POST", .path = "/c", .body = R"({"post":1})"}).ok());
  ASSERT_TRUE(client->Do({.verb = "DELETE", .path = "/d"}).ok());
  ASSERT_TRUE(client->Do({.verb = "PATCH", .path = "/e", .body = "{}"}).ok());
  ASSERT_TRUE(client->Do({.verb = "POST", .path = "/f", .body = "{}"}).ok());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 6u);
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].body, R"({"put":1})");
  EXPECT_EQ(reqs[1].method, "GET");
  EXPECT_EQ(reqs[1].body, "");
  EXPECT_EQ(reqs[1].Header("content-type"), "");
  EXPECT_EQ(reqs[1].Header("content-length"), "");
  EXPECT_EQ(reqs[2].method, "POST");
  EXPECT_EQ(reqs[2].body, R"({"post":1})");
  EXPECT_EQ(reqs[3].method, "DELETE");
  EXPECT_EQ(reqs[3].body, "");
  EXPECT_EQ(reqs[3].Header("content-type"), "");
  EXPECT_EQ(reqs[4].method, "PATCH");
  EXPECT_EQ(reqs[4].body, "{}");
  EXPECT_EQ(reqs[5].method, "POST");
  EXPECT_EQ(reqs[5].body, "{}");
}

// Bodies come back with simdjson padding reserved, so decoders need not copy.
TEST(RestClientTest, BodiesArePadded) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, R"({"a":1})"); });
  auto r = NewClient(server.url())->Do({.path = "/x"});
  ASSERT_TRUE(r.ok());
  EXPECT_GE(r->capacity(), r->size() + kJsonPadding);
}

// Connections are reused across requests.
TEST(RestClientTest, ReusesConnections) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = NewClient(server.url());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->Do({.path = "/x"}).ok());
  EXPECT_EQ(server.connections(), 1);
}

// M2 the rest_client_* metrics count requests, latency and rate-limiter waits.
TEST(RestClientTest, MetricsCounted) {
  TestServer server(
      [](const RecordedRequest& r, Conn& c) { c.Respond(r.path == "/missing" ? 404 : 200, "{}"); });
  auto client = NewClient(server.url(), {}, /*qps=*/100);
  const auto& m = GetClientMetrics();
  const std::string host = client->host();
  EXPECT_EQ(host, "127.0.0.1:" + std::to_string(server.port()));
  auto ok = m.requests_total.With({"200", "GET", host});
  auto missing = m.requests_total.With({"404", "GET", host});
  auto latency = m.request_duration.With({"GET", host});
  auto limiter = m.rate_limiter_duration.With({"GET", host});
  const double ok0 = ok.Value(), missing0 = missing.Value();
  const auto latency0 = latency.Count(), limiter0 = limiter.Count();
  ASSERT_TRUE(client->Do({.path = "/x"}).ok());
  ASSERT_FALSE(client->Do({.path = "/missing"}).ok());
  EXPECT_EQ(ok.Value() - ok0, 1);
  EXPECT_EQ(missing.Value() - missing0, 1);
  EXPECT_EQ(latency.Count() - latency0, 2u);
  EXPECT_EQ(limiter.Count() - limiter0, 2u);
  const std::string text = metrics::SerializeText();
  EXPECT_THAT(text, HasSubstr("rest_client_request_duration_seconds_bucket"));
  EXPECT_THAT(text, HasSubstr("le=\"0.005\""));
  EXPECT_THAT(text, HasSubstr("le=\"60\""));
}

// M2 each (verb, code) pair counts in its own child, also when the client has met the pair before
// (it keeps the children it resolved), and a verb the client never sent has no series.
TEST(RestClientTest, MetricsKeptPerVerbAndCode) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.method == "POST") {
      c.Respond(201, "{}");
    } else {
      c.Respond(r.path == "/missing" ? 404 : 200, "{}");
    }
  });
  auto client = NewClient(server.url());
  const auto& m = GetClientMetrics();
  const std::string host = client->host();
  auto get_ok = m.requests_total.With({"200", "GET", host});
  auto get_missing = m.requests_total.With({"404", "GET", host});
  auto post_created = m.requests_total.With({"201", "POST", host});
  auto get_latency = m.request_duration.With({"GET", host});
  auto post_latency = m.request_duration.With({"POST", host});
  auto post_limiter = m.rate_limiter_duration.With({"POST", host});
  const double get_ok0 = get_ok.Value(), get_missing0 = get_missing.Value();
  const double post_created0 = post_created.Value();
  const auto get_latency0 = get_latency.Count(), post_latency0 = post_latency.Count();
  const auto post_limiter0 = post_limiter.Count();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(client->Do({.path = "/x"}).ok());
    ASSERT_TRUE(client->Do({.verb = "POST", .path = "/x", .body = "{}"}).ok());
    ASSERT_FALSE(client->Do({.path = "/missing"}).ok());
  }
  ASSERT_TRUE(client->Do({.path = "/x"}).ok());
  EXPECT_EQ(get_ok.Value() - get_ok0, 3);
  EXPECT_EQ(get_missing.Value() - get_missing0, 2);
  EXPECT_EQ(post_created.Value() - post_created0, 2);
  EXPECT_EQ(get_latency.Count() - get_latency0, 5u);
  EXPECT_EQ(post_latency.Count() - post_latency0, 2u);
  EXPECT_EQ(post_limiter.Count() - post_limiter0, 2u);
  const std::string text = metrics::SerializeText();
  EXPECT_THAT(text, HasSubstr("host=\"" + host + "\""));
  EXPECT_THAT(text, Not(HasSubstr("host=\"" + host + "\",method=\"PUT\"")));
  EXPECT_THAT(text, Not(HasSubstr("host=\"" + host + "\",verb=\"PUT\"")));
}

// M2 a request that got no HTTP answer counts under code "<error>", once per attempt.
TEST(RestClientTest, TransportErrorCountedUnderErrorCode) {
  int port = 0;
  {
    TestServer gone([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
    port = gone.port();
  }  // closed: connections are refused now
  auto client = NewClient("http://127.0.0.1:" + std::to_string(port));
  auto errors = GetClientMetrics().requests_total.With({kErrorCodeLabel, "GET", client->host()});
  const double before = errors.Value();
  for (int i = 0; i < 2; ++i) ASSERT_FALSE(client->Do({.path = "/x"}).ok());
  EXPECT_EQ(errors.Value() - before, 2);
}

// The thread's first-write probe (controller_reaction_duration_seconds) fires when a write is
// sent, not when a read is.
TEST(RestClientTest, WriteRequestsTellTheFirstWriteProbe) {
  TestServer server([](const RecordedRequest&, Conn& c) { c.Respond(200, "{}"); });
  auto client = NewClient(server.url());
  int fired = 0;
  metrics::FirstWriteProbe probe([&] { ++fired; });
  metrics::ScopedFirstWriteProbe scope(&probe);
  ASSERT_TRUE(client->Do({.path = "/api/v1/namespaces/d/pods/p"}).ok());
  EXPECT_FALSE(probe.fired());
  ASSERT_TRUE(client->Do({.verb = "POST", .path = "/api/v1/namespaces/d/pods", .body = "{}"}).ok());
  EXPECT_TRUE(probe.fired());
  ASSERT_TRUE(client->Do({.verb = "DELETE", .path = "/api/v1/namespaces/d/pods/p"}).ok());
  EXPECT_EQ(fired, 1);
}

// A transport failure (nothing listening) is code 0 with the typed cause kConnectionRefused, and
// its message names the request.
TEST(RestClientTest, ConnectionRefusedIsTransportError) {
  int port;
  {
    TestServer server([](const RecordedRequest&, Conn&) {});
    port = server.port();
  }
  auto client =
      NewClient("http://127.0.0.1:" + std::to_string(port), {.retry = {.max_retries = 0}});
  auto r = client->Do({.verb = "POST", .path = "/x", .body = "{}"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 0);
  EXPECT_EQ(r.error().transport, TransportCause::kConnectionRefused) << r.error().ToString();
  EXPECT_TRUE(errors::IsConnectionRefused(r.error()));
  EXPECT_FALSE(errors::IsNotFound(r.error()));
  EXPECT_NE(r.error().message.find("POST http://127.0.0.1:"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace kcm::client
