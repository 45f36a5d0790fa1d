// FencedTypedClient: once the fence (the leader's "leading" token) is closed, every write is
// refused locally with "Canceled" and never reaches the inner client, while reads still do;
// before that, every call is passed through. The inner client is the recording fake.
#include "pkg/controller/fenced_client.h"

#include <gtest/gtest.h>

#include <chrono>
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

// Forwards to the fake; on Create, first asks the fence to close the namespace at once, which it
// must not manage while this very write holds its admission.
class ClosingOnCreate final : public TypedClient<api::ReplicaSet> {
 public:
  ClosingOnCreate(std::shared_ptr<TypedClient<api::ReplicaSet>> inner,
                  std::shared_ptr<NamespaceFence> fence)
      : inner_(std::move(inner)), fence_(std::move(fence)) {}
  Result<Ptr> Get(std::string_view ns, std::string_view name) override {
    return inner_->Get(ns, name);
  }
  Result<Ptr> Create(std::string_view ns, std::string body) override {
    const uint64_t h = api::ShardHash(ns);
    settled_during_write = fence_->Close({{h, h}}, std::chrono::milliseconds(0));
    return inner_->Create(ns, std::move(body));
  }
  Result<Ptr> Update(std::string_view ns, std::string_view name, std::string body) override {
    return inner_->Update(ns, name, std::move(body));
  }
  Result<Ptr> UpdateStatus(const api::ReplicaSet& obj, const StatusType& status) override {
    return inner_->UpdateStatus(obj, status);
  }
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override {
    return inner_->Patch(ns, name, patch);
  }
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override {
    return inner_->Delete(ns, name, uid);
  }
  bool settled_during_write = true;

 private:
  std::shared_ptr<TypedClient<api::ReplicaSet>> inner_;
  std::shared_ptr<NamespaceFence> fence_;
};

// With a NamespaceFence (a sharded replica's), a write to a namespace it does not admit is refused
// like a stopped one, and an admitted write holds its namespace until its answer is in: closing
// the namespace meanwhile cannot report it settled.
TEST(FencedTypedClientTest, NamespaceFenceRefusesUnservedNamespacesAndHoldsAdmittedWrites) {
  auto fake = std::make_shared<testing::FakeReplicaSetClient>();
  auto namespaces = std::make_shared<NamespaceFence>();
  const uint64_t h = api::ShardHash("ns");
  namespaces->Open({{h, h}});
  auto probe = std::make_shared<ClosingOnCreate>(fake, namespaces);
  std::stop_source leading;
  FencedTypedClient<api::ReplicaSet> client(probe, WriteFence(leading.get_token(), namespaces));

  Status elsewhere = client.Delete("other", "rs", "uid-rs");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_TRUE(IsStopped(elsewhere.error()));
  EXPECT_NE(elsewhere.error().message.find("not served by this replica"), std::string::npos)
      << elsewhere.error().message;
  EXPECT_TRUE(fake->log().Actions().empty());

  EXPECT_TRUE(client.Patch("ns", "rs", R"({"metadata":{}})").ok());
  auto created = client.Create("ns", kRS);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_FALSE(probe->settled_during_write) << "the create held its admission";
  EXPECT_TRUE(namespaces->Close({{h, h}}, std::chrono::milliseconds(0))) << "answered: settled";
  EXPECT_FALSE(client.Update("ns", "rs", kRS).ok()) << "closed by the probe";
}

}  // namespace
}  // namespace kcm::controller
