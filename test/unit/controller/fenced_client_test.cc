// FencedTypedClient: once the fence (the leader's "leading" token) is closed, every write is
// refused locally with "Canceled" and never reaches the inner client, while reads still do;
// before that, every call is passed through. The inner client is the recording fake.
#include "pkg/controller/fenced_client.h"

#include <gtest/gtest.h>

#include <stop_token>

#include "pkg/controller/testing/fake_typed_client.h"

namespace kcm::controller {
namespace {

const char* const kRS =
    R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","namespace":"ns"},)"
    R"("spec":{"replicas":1,"selector":{"matchLabels":{"app":"a"}},)"
    R"("template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[]}}}})";

TEST(FencedTypedClientTest, PassesEveryCallThroughWhileOpen) {
  auto fake = std::make_shared<testing::FakeReplicaSetClient>();
  std::stop_source leading;
  FencedTypedClient<api::ReplicaSet> client(fake, WriteFence(leading.get_token()));
  auto created = client.Create("ns", kRS);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_TRUE(client.Update("ns", "rs", kRS).ok());
  EXPECT_TRUE(client.UpdateStatus(**created, api::ReplicaSetStatus{.replicas = 1}).ok());
  EXPECT_TRUE(client.Patch("ns", "rs", R"({"metadata":{}})").ok());
  EXPECT_TRUE(client.Get("ns", "rs").ok());
  EXPECT_TRUE(client.Delete("ns", "rs", "uid-rs").ok());
  std::vector<std::string> verbs;
  for (const testing::Action& a : fake->log().Actions()) verbs.push_back(a.verb);
  EXPECT_EQ(verbs, (std::vector<std::string>{"create", "update", "update-status", "patch", "get",
                                             "delete"}));
}

TEST(FencedTypedClientTest, ClosedFenceRefusesEveryWriteLocallyButNotReads) {
  auto fake = std::make_shared<testing::FakeReplicaSetClient>();
  auto stored = fake->Create("ns", kRS);
  ASSERT_TRUE(stored.ok()) << stored.error().ToString();
  fake->log().Clear();
  std::stop_source leading;
  FencedTypedClient<api::ReplicaSet> client(fake, WriteFence(leading.get_token()));
  leading.request_stop();

  auto created = client.Create("ns", kRS);
  auto updated = client.Update("ns", "rs", kRS);
  auto status = client.UpdateStatus(**stored, api::ReplicaSetStatus{.replicas = 1});
  Status patched = client.Patch("ns", "rs", R"({"metadata":{}})");
  Status deleted = client.Delete("ns", "rs", "uid-rs");
  for (const Error* e :
       {&created.error(), &updated.error(), &status.error(), &patched.error(), &deleted.error()}) {
    EXPECT_EQ(e->reason, "Canceled");
    EXPECT_NE(e->message.find("write refused"), std::string::npos) << e->message;
    EXPECT_TRUE(IsStopped(*e));
  }
  EXPECT_NE(created.error().message.find("create replicaset ns"), std::string::npos);
  EXPECT_NE(status.error().message.find("update status of replicaset ns/rs"), std::string::npos);
  EXPECT_NE(deleted.error().message.find("delete replicaset ns/rs"), std::string::npos);
  EXPECT_TRUE(fake->log().Actions().empty());  // no write reached the inner client

  EXPECT_TRUE(client.Get("ns", "rs").ok());
  EXPECT_EQ(fake->log().Of("get", "replicasets").size(), 1u);
}

}  // namespace
}  // namespace kcm::controller
