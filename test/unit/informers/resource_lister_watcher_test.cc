// ResourceListerWatcher and the client-backed SharedInformerFactory against a scripted HTTP
// server (test/unit/client/test_server.h): request shape (6.1), decoding, and that the client's
// errors come out in the form pkg/cache classifies (2.3, 2.4).
#include "pkg/informers/resource_lister_watcher.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "pkg/api/replicaset.h"
#include "pkg/cache/pager.h"
#include "pkg/cache/reflector.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "pkg/client/rest_client.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/util/clock.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::informers {
namespace {

using namespace std::chrono_literals;
using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;
using mocks::WaitUntil;

std::string PodJson(const std::string& ns, const std::string& name, const std::string& rv,
                    const std::string& node = "") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name + R"(","namespace":")" +
         ns + R"(","resourceVersion":")" + rv +
         R"(","labels":{"app":"web"},"managedFields":[{"manager":"x"}]},"spec":{"nodeName":")" +
         node + R"("},"status":{"phase":"Running"}})";
}

std::string PodList(const std::string& rv, const std::string& items, const std::string& cont = "") {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + cont + R"("},"items":[)" + items + "]}";
}

std::string Status(int code, const std::string& reason, const std::string& message,
                   const std::string& causes = "") {
  std::string details = causes.empty() ? "" : R"(,"details":{"causes":[)" + causes + "]}";
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")" + message +
         R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + details + "}";
}

bool IsWatch(const RecordedRequest& r) {
  return r.query.find("watch=true") != std::string::npos ||
         r.query.find("watch=1") != std::string::npos;
}

std::shared_ptr<client::ResourceClient> PodsClient(const std::string& url) {
  auto c = client::RestClient::Create({.host = url, .qps = -1});
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return std::make_shared<client::ResourceClient>(*c, PodsResource().gvr, true);
}

// A loopback port nothing listens on.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(ResourceListerWatcherTest, ListDecodesIntoTheKindsRecordWithTweakedOptions) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.Respond(
        200,
        PodList("42", PodJson("team-a", "p1", "40", "n1") + "," + PodJson("team-a", "p2", "41"),
                "next"));
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "team-a", api::PodCodec(),
                           [](api::ListOptions& o) { o.label_selector = "app=web"; });
  api::ListOptions options;
  options.limit = 500;
  options.resource_version = "0";
  auto list = lw.List(options);
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(list->resource_version, "42");
  EXPECT_EQ(list->continue_token, "next");
  ASSERT_EQ(list->items.size(), 2u);
  auto& pod = static_cast<const api::Pod&>(*list->items[0]);
  EXPECT_EQ(pod.metadata.name, "p1");
  EXPECT_EQ(pod.node_name, "n1");
  EXPECT_EQ(pod.phase, api::PodPhase::kRunning);

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/team-a/pods");
  EXPECT_NE(reqs[0].query.find("labelSelector=app%3Dweb"), std::string::npos) << reqs[0].query;
  EXPECT_NE(reqs[0].query.find("limit=500"), std::string::npos) << reqs[0].query;
  EXPECT_NE(reqs[0].query.find("resourceVersion=0"), std::string::npos) << reqs[0].query;
}

TEST(ResourceListerWatcherTest, WatchDecodesEventsAndPassesErrorFrames) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":)" + PodJson("ns", "p", "5") + "}\n");
    c.Chunk(
        R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"7"}}})"
        "\n");
    c.Chunk(R"({"type":"ERROR","object":)" +
            Status(410, "Expired", "too old resource version: 5 (9)") + "}\n");
    c.EndChunked();
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  api::ListOptions options;
  options.resource_version = "4";
  options.allow_watch_bookmarks = true;
  auto w = lw.Watch(options);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto e1 = (*w)->Next();
  ASSERT_TRUE(e1.ok() && e1->has_value());
  EXPECT_EQ((*e1)->type, api::WatchEventType::kAdded);
  EXPECT_EQ((*e1)->object->Meta().name, "p");
  auto e2 = (*w)->Next();
  ASSERT_TRUE(e2.ok() && e2->has_value());
  EXPECT_EQ((*e2)->type, api::WatchEventType::kBookmark);
  EXPECT_EQ((*e2)->resource_version, "7");
  auto e3 = (*w)->Next();
  ASSERT_TRUE(e3.ok() && e3->has_value());
  ASSERT_EQ((*e3)->type, api::WatchEventType::kError);
  // 2.4: what the reflector turns into a relist.
  EXPECT_TRUE(cache::IsExpiredOrGone((*e3)->error)) << (*e3)->error.ToString();
  auto end = (*w)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_TRUE(IsWatch(reqs[0])) << reqs[0].query;
  EXPECT_NE(reqs[0].query.find("allowWatchBookmarks=true"), std::string::npos);
  EXPECT_NE(reqs[0].query.find("resourceVersion=4"), std::string::npos);
}

// LIST (its own decoder per call) and WATCH (the long-lived one) intern through one table: the
// pods they decode share one label set (docs/design/compact-pod-record.md).
TEST(ResourceListerWatcherTest, ListAndWatchShareInternedLabels) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (!IsWatch(r)) {
      c.Respond(200, PodList("5", PodJson("ns", "listed", "4")));
      return;
    }
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":)" + PodJson("ns", "watched", "6") + "}\n");
    c.EndChunked();
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  auto list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  auto w = lw.Watch({});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto e = (*w)->Next();
  ASSERT_TRUE(e.ok() && e->has_value());
  ASSERT_NE((*e)->object, nullptr);
  const api::Labels& listed = list->items[0]->Meta().labels;
  const api::Labels& watched = (*e)->object->Meta().labels;
  EXPECT_EQ(watched.at("app"), "web");
  EXPECT_TRUE(listed.SharesStorageWith(watched));
}

// 1.8: an undecodable frame ends the stream with the synthetic 500 ClientWatchDecoding.
TEST(ResourceListerWatcherTest, UndecodableFrameEndsTheStream) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":7}}})"
            "\n");
    c.HoldOpen();
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  auto w = lw.Watch({});
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  auto e = (*w)->Next();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, 500);
  EXPECT_EQ(e.error().reason, "ClientWatchDecoding");
}

// 2.3: 410 on LIST and "too large resource version" are classified as pkg/cache expects.
TEST(ResourceListerWatcherTest, ListErrorsKeepTheirApiClassification) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("resourceVersion=10") != std::string::npos) {
      c.Respond(410, Status(410, "Expired", "too old"));
    } else {
      c.Respond(504, Status(504, "Timeout", "Too large resource version: 99, current: 12",
                            R"({"reason":"ResourceVersionTooLarge","message":"x"})"));
    }
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  api::ListOptions old_rv;
  old_rv.resource_version = "10";
  auto gone = lw.List(old_rv);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(cache::IsExpiredOrGone(gone.error())) << gone.error().ToString();
  EXPECT_FALSE(cache::IsWatchErrorRetriable(gone.error()));

  api::ListOptions future;
  future.resource_version = "99";
  auto ahead = lw.List(future);
  ASSERT_FALSE(ahead.ok());
  EXPECT_TRUE(errors::IsTooLargeResourceVersion(ahead.error())) << ahead.error().ToString();
}

// A LIST answer is decoded as it arrives: items split across chunks at every odd place come out
// whole and in order; the metadata is read wherever it is.
TEST(ResourceListerWatcherTest, ListDecodedFromChunksAsTheyArrive) {
  std::string items;
  for (int i = 0; i < 50; ++i) {
    items += (i ? "," : "") + PodJson("ns", "p" + std::to_string(i), std::to_string(i + 1));
  }
  const std::string body = PodList("77", items, "more");
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    for (size_t i = 0; i < body.size(); i += 13) c.Chunk(body.substr(i, 13));
    c.EndChunked();
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  auto list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 50u);
  EXPECT_EQ(list->items[49]->Meta().name, "p49");
  EXPECT_EQ(list->resource_version, "77");
  EXPECT_EQ(list->continue_token, "more");
}

// A body cut short is an error, never a shorter list. The connection dies mid-body each time;
// the client retries the GET (a reset), and every attempt starts from an empty decoder, so the
// items of a broken attempt never leak into the next.
TEST(ResourceListerWatcherTest, ListCutShortIsAnErrorAndRetriesStartAfresh) {
  const std::string full = PodList("8", PodJson("ns", "a", "1") + "," + PodJson("ns", "b", "2"));
  std::atomic<int> attempts{0};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    const int n = ++attempts;
    c.StartChunked(200);
    if (n == 1) {
      c.Chunk(full.substr(0, full.size() / 2 + 20));  // one item and a half, then gone
      c.Close();
      return;
    }
    c.Chunk(full);
    c.EndChunked();
  });
  ResourceListerWatcher lw(PodsClient(server.url()), "ns", api::PodCodec());
  auto list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(attempts.load(), 2);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->Meta().name, "a");
  EXPECT_EQ(list->items[1]->Meta().name, "b");

  TestServer always_cut([&](const RecordedRequest&, Conn& c) {
    c.StartChunked(200);
    c.Chunk(full.substr(0, full.size() - 3));
    c.Close();
  });
  ResourceListerWatcher cut(PodsClient(always_cut.url()), "ns", api::PodCodec());
  auto broken = cut.List({});
  ASSERT_FALSE(broken.ok());
  EXPECT_TRUE(errors::IsConnectionReset(broken.error())) << broken.error().ToString();
}

// An error answer to a protobuf LIST is a protobuf Status; it keeps its API classification.
TEST(ResourceListerWatcherTest, ProtobufStatusAnswerKeepsItsClassification) {
  auto bytes = [](int number, const std::string& v) {
    std::string out(1, static_cast<char>((number << 3) | 2));
    out.push_back(static_cast<char>(v.size()));
    return out + v;
  };
  const std::string status = bytes(3, "too old resource version") + bytes(4, "Expired") +
                             std::string{0x30, static_cast<char>(0x9a), 0x03};  // code = 410
  const std::string body =
      std::string("k8s\0", 4) + bytes(1, bytes(1, "v1") + bytes(2, "Status")) + bytes(2, status);
  TestServer server([&](const RecordedRequest&, Conn& c) {
    c.Respond(410, body, {{"Content-Type", "application/vnd.kubernetes.protobuf"}});
  });
  client::RestConfig config{.host = server.url(), .qps = -1};
  config.content_type = "application/vnd.kubernetes.protobuf";
  auto rest = client::RestClient::Create(config);
  ASSERT_TRUE(rest.ok());
  ResourceListerWatcher lw(
      std::make_shared<client::ResourceClient>(*rest, PodsResource().gvr, true), "ns",
      api::PodCodec());
  auto list = lw.List({});
  ASSERT_FALSE(list.ok());
  EXPECT_TRUE(errors::IsResourceExpired(list.error())) << list.error().ToString();
  EXPECT_EQ(list.error().code, 410);
}

// 2.4: a refused connection (API server restarting) is retriable: back off and re-watch, keep the
// cache. pkg/client classifies it (TransportCause::kConnectionRefused from the CURLcode) and the
// adapter hands it on unchanged; nothing reads curl's wording.
TEST(ResourceListerWatcherTest, ConnectionRefusedIsRetriable) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  ResourceListerWatcher lw(PodsClient(url), "ns", api::PodCodec());
  // The watch request is sent when the stream is first read; the failure surfaces there.
  auto w = lw.Watch({});
  Error err = w.ok() ? Error{} : w.error();
  if (w.ok()) {
    auto e = (*w)->Next();
    ASSERT_FALSE(e.ok());
    err = e.error();
  }
  EXPECT_EQ(err.code, 0);
  EXPECT_EQ(err.transport, TransportCause::kConnectionRefused) << err.ToString();
  EXPECT_TRUE(cache::IsWatchErrorRetriable(err)) << err.ToString();
  auto l = lw.List({});
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().transport, TransportCause::kConnectionRefused) << l.error().ToString();
  EXPECT_FALSE(cache::IsExpiredOrGone(l.error()));
}

// 2.4: the reflector's reading of an error is by reason and transport cause only: the same
// message text under another cause means something else.
TEST(ResourceListerWatcherTest, ReflectorClassifiesByCauseNotMessage) {
  const std::string curl_words = "Couldn't connect to server: connection refused";
  EXPECT_TRUE(
      cache::IsWatchErrorRetriable(Error::Transport(TransportCause::kConnectionRefused, "x")));
  EXPECT_FALSE(cache::IsWatchErrorRetriable(Error::Transport(TransportCause::kOther, curl_words)));
  EXPECT_FALSE(cache::IsWatchErrorRetriable(Error{0, "Transport", curl_words, {}}));
  EXPECT_FALSE(
      cache::IsWatchErrorRetriable(Error::Transport(TransportCause::kConnectionReset, "")));
  EXPECT_TRUE(cache::IsWatchStreamBroken(Error::Transport(TransportCause::kConnectionReset, "")));
  EXPECT_TRUE(cache::IsWatchStreamBroken(Error::Transport(TransportCause::kTimedOut, "")));
  EXPECT_FALSE(cache::IsWatchStreamBroken(Error::Transport(TransportCause::kTooLarge, "")));
  EXPECT_TRUE(cache::IsWatchErrorRetriable(Error{429, "TooManyRequests", "slow down", {}}));
  // A server timeout (504) is not the client's: no transport cause.
  EXPECT_FALSE(cache::IsWatchStreamBroken(Error{504, "Timeout", "timed out", {}}));
}

// 6.1: the client-backed factory sends the namespace and the tweaked selectors on every LIST and
// WATCH; a cluster-scoped resource ignores the namespace. The informer syncs what was listed.
TEST(SharedInformerFactoryClientTest, NamespaceAndTweakReachListAndWatch) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r) && r.path == "/api/v1/namespaces") {
      c.StartChunked(200);
      c.HoldOpen();
      return;
    }
    if (IsWatch(r)) {
      c.StartChunked(200);
      c.Chunk(R"({"type":"MODIFIED","object":)" + PodJson("team-a", "p1", "43", "n2") + "}\n");
      c.HoldOpen();
      return;
    }
    if (r.path == "/api/v1/namespaces") {
      c.Respond(
          200,
          R"({"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"50"},"items":[{"metadata":{"name":"team-a","resourceVersion":"3"}}]})");
      return;
    }
    c.Respond(200, PodList("42", PodJson("team-a", "p1", "40")));
  });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  SharedInformerFactoryOptions options;
  options.namespace_ = "team-a";
  options.tweak_list_options = [](api::ListOptions& o) {
    o.label_selector = "app=web";
    o.field_selector = "status.phase=Running";
  };
  SharedInformerFactory factory(*rest, 0s, options);
  auto pods = factory.Pods();
  auto namespaces = factory.InformerFor(GenericResource({"", "v1", "namespaces"}, false));
  std::stop_source stop;
  factory.Start(stop.get_token());
  auto synced = factory.WaitForCacheSync(stop.get_token());
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"generic:namespaces", true}, {"pods", true}}));
  // The watch's MODIFIED reaches the cache.
  ASSERT_TRUE(WaitUntil([&] {
    auto p = pods.lister.ByNamespace("team-a").Get("p1");
    return p.ok() && (*p)->metadata.resource_version == "43";
  }));
  EXPECT_EQ(namespaces->GetIndexer()->List().size(), 1u);
  factory.Shutdown();

  int pod_lists = 0, pod_watches = 0;
  for (const auto& r : server.requests()) {
    if (r.path == "/api/v1/namespaces") {
      // The tweak applies to every informer of the factory (as upstream), the namespace only
      // to namespaced ones.
      EXPECT_NE(r.query.find("labelSelector=app%3Dweb"), std::string::npos) << r.query;
      continue;
    }
    EXPECT_EQ(r.path, "/api/v1/namespaces/team-a/pods");
    EXPECT_NE(r.query.find("labelSelector=app%3Dweb"), std::string::npos) << r.query;
    EXPECT_NE(r.query.find("fieldSelector=status.phase%3DRunning"), std::string::npos) << r.query;
    (IsWatch(r) ? pod_watches : pod_lists)++;
  }
  EXPECT_GE(pod_lists, 1);
  EXPECT_GE(pod_watches, 1);
}

// One InternTable for all informers of a factory: a pod's labels are the very set its
// ReplicaSet's metadata and template labels point at, though they arrive on different informers.
TEST(SharedInformerFactoryClientTest, InformersShareOneInternTable) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r)) {
      c.StartChunked(200);
      c.HoldOpen();
      return;
    }
    if (r.path.find("/replicasets") != std::string::npos) {
      c.Respond(
          200,
          R"({"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7"},)"
          R"("items":[{"metadata":{"name":"rs","namespace":"ns","resourceVersion":"6",)"
          R"("labels":{"app":"web"}},"spec":{"template":{"metadata":{"labels":{"app":"web"}}}}}]})");
      return;
    }
    c.Respond(200, PodList("5", PodJson("ns", "p1", "4")));
  });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  SharedInformerFactory factory(*rest, 0s);
  auto pods = factory.Pods();
  auto replicasets = factory.ReplicaSets();
  std::stop_source stop;
  factory.Start(stop.get_token());
  auto synced = factory.WaitForCacheSync(stop.get_token());
  EXPECT_EQ(synced, (std::map<std::string, bool>{{"pods", true}, {"replicasets.apps", true}}));
  auto pod = pods.lister.ByNamespace("ns").Get("p1");
  auto rs = replicasets.lister.ByNamespace("ns").Get("rs");
  ASSERT_TRUE(pod.ok() && rs.ok());
  EXPECT_EQ((*pod)->metadata.labels.at("app"), "web");
  EXPECT_TRUE((*pod)->metadata.labels.SharesStorageWith((*rs)->metadata.labels));
  EXPECT_TRUE((*pod)->metadata.labels.SharesStorageWith((*rs)->spec.pod_template.labels));
  factory.Shutdown();
}

std::string ReplicaSetJson(const std::string& name, const std::string& rv) {
  return R"({"kind":"ReplicaSet","apiVersion":"apps/v1","metadata":{"name":")" + name +
         R"(","namespace":"ns","resourceVersion":")" + rv +
         R"(","labels":{"app":"web"}},"spec":{"replicas":3,"selector":{"matchLabels":)"
         R"({"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":)"
         R"([{"name":"web","image":"registry.example/web:)" +
         rv + R"("}]}}},"status":{"replicas":3,"observedGeneration":1}})";
}

// The client-backed factory watches ReplicaSets with their kept text plain (no deflate at each
// event), and their informer packs what stayed unchanged for compact_after (10 s) without an
// event: both halves of PacksOnceUnchanged, end to end.
TEST(SharedInformerFactoryClientTest, WatchedReplicaSetsArePackedOnceUnchanged) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (IsWatch(r)) {
      c.StartChunked(200);
      c.Chunk(R"({"type":"MODIFIED","object":)" + ReplicaSetJson("a", "7") + "}\n");
      c.Chunk(R"({"type":"MODIFIED","object":)" + ReplicaSetJson("b", "7") + "}\n");
      c.HoldOpen();
      return;
    }
    c.Respond(
        200,
        R"({"kind":"ReplicaSetList","apiVersion":"apps/v1","metadata":{"resourceVersion":"6"},"items":[)" +
            ReplicaSetJson("a", "6") + "," + ReplicaSetJson("b", "6") + "]}");
  });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  FakeClock clock;
  SharedInformerFactoryOptions options;
  options.clock = &clock;
  SharedInformerFactory factory(*rest, 0s, options);
  auto replicasets = factory.ReplicaSets();
  std::stop_source stop;
  factory.Start(stop.get_token());
  auto get = [&](const std::string& name) -> std::shared_ptr<const api::ReplicaSet> {
    auto rs = replicasets.lister.ByNamespace("ns").Get(name);
    return rs.ok() ? *rs : nullptr;
  };
  ASSERT_TRUE(WaitUntil([&] {
    auto a = get("a"), b = get("b");
    return a && b && a->metadata.resource_version == "7" && b->metadata.resource_version == "7";
  }));
  EXPECT_FALSE(get("a")->raw_json.packed());
  EXPECT_FALSE(get("b")->raw_json.packed());
  const std::string a_text = get("a")->raw_json.str();
  const std::string b_text = get("b")->raw_json.str();
  EXPECT_NE(b_text.find("registry.example/web:7"), std::string::npos) << b_text;

  clock.Step(10s);
  // The informer's packer keeps the first text of a kind (a's) plain as its dictionary and packs
  // each later one against it.
  ASSERT_TRUE(WaitUntil([&] { return get("b")->raw_json.packed(); }));
  EXPECT_EQ(get("b")->raw_json.str(), b_text);
  EXPECT_NE(get("b")->spec.pod_template.raw_json.str().find("registry.example/web:7"),
            std::string::npos)
      << "the template's view moved onto the packed text";
  EXPECT_EQ(get("a")->raw_json.str(), a_text);
  factory.Shutdown();
}

// 6.3: Shutdown must not wait for an API server that never answers: the factory's stop reaches
// the REST client, so an in-flight LIST is cancelled (the client has no request timeout here).
TEST(SharedInformerFactoryClientTest, ShutdownCancelsAnUnansweredList) {
  std::atomic<bool> listing{false};
  TestServer server([&listing](const RecordedRequest&, Conn& c) {
    listing = true;
    c.HoldOpen();  // reads nothing more, answers nothing, until the client goes away
  });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  auto factory = std::make_unique<SharedInformerFactory>(*rest, 0s);
  factory->Pods();
  factory->Start({});
  ASSERT_TRUE(WaitUntil([&] { return listing.load(); }));
  // Without cancellation this join never returns; the watchdog turns that into a failure.
  std::atomic<bool> done{false};
  std::thread watchdog([&done] {
    for (int i = 0; i < 3000 && !done; ++i) std::this_thread::sleep_for(10ms);
    if (!done) {
      ADD_FAILURE() << "Shutdown still waiting for the LIST after 30 s";
      std::_Exit(1);
    }
  });
  factory->Shutdown();
  done = true;
  watchdog.join();
}

}  // namespace
}  // namespace kcm::informers
