#include <gtest/gtest.h>

#include "pkg/client/api_errors.h"
#include "pkg/client/resource_client.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::Conn;
using testing::RecordedRequest;
using testing::TestServer;

std::string Page(const std::string& rv, const std::string& cont, const std::string& item) {
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
         R"(","continue":")" + cont + R"("},"items":[{"metadata":{"name":")" + item + R"("}}]})";
}

const GroupVersionResource kPods{"", "v1", "pods"};

// 1.9 pages of 500 by default, continue tokens followed, resourceVersion only on the first page.
TEST(ListAllTest, FollowsContinueTokens) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("continue=t2") != std::string::npos) {
      c.Respond(200, Page("9", "", "c"));
    } else if (r.query.find("continue=t1") != std::string::npos) {
      c.Respond(200, Page("9", "t2", "b"));
    } else {
      c.Respond(200, Page("9", "t1", "a"));
    }
  });
  auto client = RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(client.ok());
  ResourceClient pods(*client, kPods, true);
  auto pages = pods.ListAll("ns", {.label_selector = "app=x", .resource_version = "0"});
  ASSERT_TRUE(pages.ok()) << pages.error().ToString();
  ASSERT_EQ(pages->size(), 3u);
  EXPECT_EQ((*pages)[2], Page("9", "", "c"));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].query, "labelSelector=app%3Dx&limit=500&resourceVersion=0");
  EXPECT_EQ(reqs[1].query, "continue=t1&labelSelector=app%3Dx&limit=500");
  EXPECT_EQ(reqs[2].query, "continue=t2&labelSelector=app%3Dx&limit=500");
}

// 1.9 a continue page answered 410 Expired: one full unpaginated list at the original RV.
TEST(ListAllTest, ExpiredContinueFallsBackToFullList) {
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
  auto client = RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(client.ok());
  ResourceClient pods(*client, kPods, true);
  auto pages = pods.ListAll("", {.resource_version = "7", .limit = 100});
  ASSERT_TRUE(pages.ok()) << pages.error().ToString();
  ASSERT_EQ(pages->size(), 1u);
  EXPECT_EQ((*pages)[0], Page("20", "", "everything"));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].query, "limit=100&resourceVersion=7");
  EXPECT_EQ(reqs[1].query, "continue=t1&limit=100");
  EXPECT_EQ(reqs[2].query, "resourceVersion=7");
}

// 1.9 other errors on a continue page are returned as they are.
TEST(ListAllTest, OtherErrorsReturned) {
  TestServer server([](const RecordedRequest& r, Conn& c) {
    if (r.query.find("continue=") != std::string::npos) {
      c.Respond(403, R"({"kind":"Status","code":403,"reason":"Forbidden"})");
    } else {
      c.Respond(200, Page("10", "t1", "a"));
    }
  });
  auto client = RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(client.ok());
  ResourceClient pods(*client, kPods, true);
  auto pages = pods.ListAll("", {});
  ASSERT_FALSE(pages.ok());
  EXPECT_TRUE(IsForbidden(pages.error()));
}

}  // namespace
}  // namespace kcm::client
