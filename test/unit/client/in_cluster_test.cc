#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "pkg/client/api_errors.h"
#include "pkg/client/in_cluster_config.h"
#include "pkg/client/rest_client.h"
#include "pkg/client/token_source.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"

namespace kcm::client {
namespace {

using testing::RecordedRequest;
using testing::TempDir;
using testing::TestServer;
using testing::WriteFileOrDie;

class InClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    opts_.token_file = dir_ + "/token";
    opts_.ca_file = dir_ + "/ca.crt";
    WriteFileOrDie(opts_.token_file, "tok-1\n");
    WriteFileOrDie(opts_.ca_file, "pem");
    opts_.service_host = "10.96.0.1";
    opts_.service_port = "443";
  }
  TempDir tmp_;
  std::string dir_;
  InClusterOptions opts_;
};

// 1.3 both service variables are required.
TEST_F(InClusterTest, NeedsServiceEnvironment) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto rc = InClusterConfig(InClusterOptions::FromEnvironment());
  ASSERT_FALSE(rc.ok());
  EXPECT_THAT(rc.error().message, ::testing::HasSubstr("KUBERNETES_SERVICE_HOST"));
}

// 1.3 host from the environment (IPv6 bracketed), token file and ca.crt beside it.
TEST_F(InClusterTest, BuildsConfigIPv4AndIPv6) {
  auto rc = InClusterConfig(opts_);
  ASSERT_TRUE(rc.ok()) << rc.error().ToString();
  EXPECT_EQ(rc->host, "https://10.96.0.1:443");
  EXPECT_EQ(rc->bearer_token_file, opts_.token_file);
  EXPECT_EQ(rc->bearer_token, "tok-1");
  EXPECT_EQ(rc->ca_file, opts_.ca_file);

  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  InClusterOptions env = InClusterOptions::FromEnvironment();
  env.token_file = opts_.token_file;
  env.ca_file = opts_.ca_file;
  rc = InClusterConfig(env);
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->host, "https://[fd00::1]:6443");

  opts_.token_file = dir_ + "/missing";
  EXPECT_FALSE(InClusterConfig(opts_).ok());
}

// 1.3 the token file is re-read, but at most once a minute.
TEST_F(InClusterTest, TokenFileCachedForAMinute) {
  FakeClock clock;
  CachedFileTokenSource source("", opts_.token_file, clock);
  EXPECT_EQ(*source.Token(), "tok-1");
  WriteFileOrDie(opts_.token_file, "tok-2");
  clock.Step(std::chrono::seconds(59));
  EXPECT_EQ(*source.Token(), "tok-1");
  clock.Step(std::chrono::seconds(1));
  EXPECT_EQ(*source.Token(), "tok-2");
  // Invalidate (after a 401) forces a re-read at once.
  WriteFileOrDie(opts_.token_file, "tok-3");
  source.Invalidate();
  EXPECT_EQ(*source.Token(), "tok-3");
}

// 1.3 a 401 drops the cached token; the request is retried once with the re-read file.
TEST_F(InClusterTest, UnauthorizedRereadsTokenAndRetriesOnce) {
  std::atomic<bool> rotated{false};
  TestServer server([&](const RecordedRequest& r, testing::Conn& c) {
    const std::string want = rotated ? "Bearer tok-2" : "Bearer tok-1";
    if (r.Header("authorization") == want) {
      c.Respond(200, "{}");
    } else {
      c.Respond(401, R"({"kind":"Status","code":401,"reason":"Unauthorized"})");
    }
  });
  RestConfig config{.host = server.url(), .bearer_token_file = opts_.token_file, .qps = -1};
  auto client = RestClient::Create(config);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Do({.path = "/api/v1/pods"}).ok());
  WriteFileOrDie(opts_.token_file, "tok-2");
  rotated = true;
  auto r = (*client)->Do({.path = "/api/v1/pods"});
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].Header("authorization"), "Bearer tok-1");
  EXPECT_EQ(reqs[2].Header("authorization"), "Bearer tok-2");

  // A token the server keeps refusing: one retry only, then Unauthorized.
  rotated = false;
  WriteFileOrDie(opts_.token_file, "tok-bad");
  auto denied = (*client)->Do({.path = "/api/v1/pods"});
  ASSERT_FALSE(denied.ok());
  EXPECT_TRUE(errors::IsUnauthorized(denied.error()));
  EXPECT_EQ(server.requests().size(), 5u);
}

}  // namespace
}  // namespace kcm::client
