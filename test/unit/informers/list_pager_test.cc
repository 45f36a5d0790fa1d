// cache::ListAllPages (upstream's tools/pager ListPager, the one pager of the code base) through
// the production ResourceListerWatcher against a scripted HTTP server: the queries on the wire
// (behaviour 1.9) and the 410 full-list fallback.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "pkg/api/protobuf.h"
#include "pkg/cache/pager.h"
#include "pkg/client/rest_client.h"
#include "pkg/informers/resource_lister_watcher.h"
#include "pkg/informers/resources.h"
#include "test/unit/client/test_server.h"

namespace kcm::informers {
namespace {

using kcm::testing::Conn;
using kcm::testing::RecordedRequest;
using kcm::testing::TestServer;

std::string Page(const std::string& rv, const std::string& cont, const std::string& item) {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + cont + R"("},"items":[{"metadata":{"name":")" + item +
         R"(","namespace":"ns"}}]})";
}

std::unique_ptr<ResourceListerWatcher> PodsListerWatcher(const TestServer& server) {
  auto c = client::RestClient::Create({.host = server.url(), .qps = -1});
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  auto pods = std::make_shared<client::ResourceClient>(*c, PodsResource().gvr, true);
  return std::make_unique<ResourceListerWatcher>(pods, "ns", api::PodCodec());
}

std::vector<std::string> Names(const cache::PagedList& list) {
  std::vector<std::string> out;
  for (const auto& o : list.items) out.push_back(o->Meta().name);
  return out;
}

// 1.9 pages of the given size, continue tokens followed, resourceVersion only on the first page.
TEST(ListPagerTest, FollowsContinueTokens) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("continue=t2") != std::string::npos) {
      c.Respond(200, Page("9", "", "c"));
    } else if (r.query.find("continue=t1") != std::string::npos) {
      c.Respond(200, Page("9", "t2", "b"));
    } else {
      c.Respond(200, Page("9", "t1", "a"));
    }
  });
  auto lw = PodsListerWatcher(server);
  auto list = cache::ListAllPages(*lw, {.label_selector = "app=x", .resource_version = "0"},
                                  cache::kDefaultPageSize, {});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(Names(*list), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(list->resource_version, "9");
  EXPECT_TRUE(list->paginated);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].query, "labelSelector=app%3Dx&limit=500&resourceVersion=0");
  EXPECT_EQ(reqs[1].query, "continue=t1&labelSelector=app%3Dx&limit=500");
  EXPECT_EQ(reqs[2].query, "continue=t2&labelSelector=app%3Dx&limit=500");
}

// 1.9 a continue page answered 410 Expired: one full unpaginated list at the original RV, whose
// items replace what the earlier pages returned.
TEST(ListPagerTest, ExpiredContinueFallsBackToFullList) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("continue=") != std::string::npos) {
      c.Respond(410, R"({"kind":"Status","code":410,"reason":"Expired",
        "message":"The provided continue parameter is too old"})");
    } else if (r.query.find("limit=") == std::string::npos) {
      c.Respond(200, Page("20", "", "everything"));
    } else {
      c.Respond(200, Page("10", "t1", "a"));
    }
  });
  auto lw = PodsListerWatcher(server);
  auto list = cache::ListAllPages(*lw, {.resource_version = "7"}, 100, {});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  EXPECT_EQ(Names(*list), (std::vector<std::string>{"everything"}));
  EXPECT_EQ(list->resource_version, "20");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].query, "limit=100&resourceVersion=7");
  EXPECT_EQ(reqs[1].query, "continue=t1&limit=100");
  EXPECT_EQ(reqs[2].query, "resourceVersion=7");
}

// 1.9 an Expired first page is returned (no fallback: there is no snapshot to lose), and so is
// any other error on a continue page.
TEST(ListPagerTest, OtherErrorsReturned) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("resourceVersion=3") != std::string::npos) {
      c.Respond(410, R"({"kind":"Status","code":410,"reason":"Expired"})");
    } else if (r.query.find("continue=") != std::string::npos) {
      c.Respond(403, R"({"kind":"Status","code":403,"reason":"Forbidden"})");
    } else {
      c.Respond(200, Page("10", "t1", "a"));
    }
  });
  auto lw = PodsListerWatcher(server);
  auto forbidden = cache::ListAllPages(*lw, {}, cache::kDefaultPageSize, {});
  ASSERT_FALSE(forbidden.ok());
  EXPECT_TRUE(errors::IsForbidden(forbidden.error())) << forbidden.error().ToString();

  auto expired = cache::ListAllPages(*lw, {.resource_version = "3"}, cache::kDefaultPageSize, {});
  ASSERT_FALSE(expired.ok());
  EXPECT_TRUE(errors::IsResourceExpired(expired.error())) << expired.error().ToString();
  EXPECT_EQ(server.requests().size(), 3u);
}

// Upstream keeps one undecodable item fatal for the whole LIST.
TEST(ListPagerTest, UndecodableItemFailsTheList) {
  TestServer server([](const RecordedRequest&, Conn& c) {
    c.Respond(200, R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
                   R"("items":[{"metadata":{"name":"ok"}},{"metadata":{"name":7}}]})");
  });
  auto lw = PodsListerWatcher(server);
  auto list = cache::ListAllPages(*lw, {}, cache::kDefaultPageSize, {});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().reason, "DecodeError") << list.error().ToString();
}

// --kube-api-content-type=application/vnd.kubernetes.protobuf: the pod LIST asks for protobuf
// (JSON as the fallback) and decodes what the Content-Type says the server sent.
TEST(ListPagerTest, ProtobufContentTypeNegotiatesAndFallsBackToJson) {
  const std::string testdata = KCM_API_TESTDATA;
  std::ifstream in(testdata + "/podlist-protobuf.pb", std::ios::binary);
  const std::string protobuf_list((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  ASSERT_TRUE(api::HasProtobufMagic(protobuf_list));
  std::atomic<bool> answer_protobuf{true};
  TestServer server([&](const RecordedRequest&, Conn& c) {
    if (answer_protobuf) {
      c.Respond(200, protobuf_list, {{"Content-Type", "application/vnd.kubernetes.protobuf"}});
    } else {
      c.Respond(200, Page("9", "", "from-json"));
    }
  });
  client::RestConfig config{.host = server.url(), .qps = -1};
  config.content_type = "application/vnd.kubernetes.protobuf";
  auto c = client::RestClient::Create(config);
  ASSERT_TRUE(c.ok());
  auto pods = std::make_shared<client::ResourceClient>(*c, PodsResource().gvr, true);
  ResourceListerWatcher lw(pods, "ns", api::PodCodec());
  auto list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Meta().name, "web-7d9f8b6c5d-proto");
  answer_protobuf = false;
  list = lw.List({});
  ASSERT_TRUE(list.ok()) << list.error().ToString();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->Meta().name, "from-json");
  for (const auto& r : server.requests()) {
    EXPECT_EQ(r.Header("accept"), "application/vnd.kubernetes.protobuf, application/json");
  }

  // Kinds without a protobuf decoder, and the JSON content type, ask for JSON only.
  ResourceListerWatcher rs(
      std::make_shared<client::ResourceClient>(*c, ReplicaSetsResource().gvr, true), "ns",
      api::ReplicaSetCodec());
  (void)rs.List({});
  EXPECT_EQ(server.requests().back().Header("accept"), "application/json");
}

}  // namespace
}  // namespace kcm::informers
