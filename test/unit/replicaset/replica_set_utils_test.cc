// Unit tests of replica_set_utils (conditions, calculateStatus edge cases, next availability) and
// of RestTypedClient<ReplicaSet>'s status write against a scripted HTTP server (R14: a lossless
// PUT).
#include "controllers/replicaset/replica_set_utils.h"

#include <gtest/gtest.h>

#include "pkg/api/json.h"
#include "pkg/client/resource_client.h"
#include "pkg/controller/typed_client.h"
#include "test/unit/client/test_server.h"
#include "test/unit/replicaset/fixtures.h"

namespace kcm::replicaset {
namespace {

using namespace std::chrono_literals;
namespace json = api::json;

const api::Time kNow = api::Time{} + std::chrono::seconds(1700000000);

// R14: SetCondition keeps an existing condition (and its lastTransitionTime) with the same
// status and reason; a different reason replaces it.
TEST(ConditionsTest, SetKeepsSameStatusAndReason) {
  api::ReplicaSetStatus status;
  SetCondition(status, NewReplicaSetCondition(kReplicaFailure, "True", "FailedCreate", "a", kNow));
  SetCondition(status,
               NewReplicaSetCondition(kReplicaFailure, "True", "FailedCreate", "b", kNow + 1h));
  ASSERT_EQ(status.conditions.size(), 1u);
  EXPECT_EQ(status.conditions[0].message, "a");
  EXPECT_EQ(status.conditions[0].last_transition_time, kNow);
  SetCondition(status,
               NewReplicaSetCondition(kReplicaFailure, "True", "FailedDelete", "c", kNow + 1h));
  ASSERT_EQ(status.conditions.size(), 1u);
  EXPECT_EQ(status.conditions[0].reason, "FailedDelete");
  RemoveCondition(status, kReplicaFailure);
  EXPECT_TRUE(status.conditions.empty());
}

// R14: an existing ReplicaFailure is kept (not rewritten) while manage keeps failing; other
// condition types are left alone when it is removed.
TEST(CalculateStatusTest, ExistingFailureKeptWhileFailingOtherConditionsUntouched) {
  auto rs = testing::NewReplicaSet("rs", 2);
  rs->status.conditions.push_back(
      NewReplicaSetCondition(kReplicaFailure, "True", "FailedCreate", "old", kNow - 1h));
  rs->status.conditions.push_back(NewReplicaSetCondition("Custom", "True", "X", "", kNow - 1h));
  std::vector<PodPtr> pods;
  Status failed = Error{403, "Forbidden", "new", {}};
  api::ReplicaSetStatus s = CalculateStatus(*rs, {&pods, 0, &failed, kNow});
  EXPECT_EQ(s.conditions, rs->status.conditions);
  Status ok;
  s = CalculateStatus(*rs, {&pods, 0, &ok, kNow});
  ASSERT_EQ(s.conditions.size(), 1u);
  EXPECT_EQ(s.conditions[0].type, "Custom");
}

// R15: nothing to wait for without minReadySeconds, or when every Ready pod is available.
TEST(NextAvailabilityCheckTest, NoneWithoutMinReadyOrWhenAllAvailable) {
  std::vector<PodPtr> pods = {
      testing::NewPod("a", {.owner = "rs", .app = "rs", .ready_since = kNow - 5s}, kNow)};
  EXPECT_FALSE(NextAvailabilityCheck(pods, 0, kNow).has_value());
  EXPECT_FALSE(NextAvailabilityCheck(pods, 3, kNow).has_value());
  auto next = NextAvailabilityCheck(pods, 8, kNow);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(*next, 3s);
  EXPECT_LE(*next, 3s + 10ms);
}

// R14, decision 1: the status PUT goes to .../status, starts from the object's raw JSON (unknown
// fields and resourceVersion kept) and replaces the modelled status fields.
TEST(RestTypedClientTest, StatusPutKeepsUnknownFields) {
  const std::string raw =
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","namespace":"ns","uid":"u","resourceVersion":"42","generation":3,"futureMeta":1},)"
      R"("spec":{"replicas":2,"selector":{"matchLabels":{"app":"rs"}},"futureSpec":"x","template":{"metadata":{"labels":{"app":"rs"}},"spec":{"containers":[]}}},)"
      R"("status":{"replicas":1,"futureStatus":{"k":"v"}}})";
  kcm::testing::TestServer server([&](const kcm::testing::RecordedRequest& req,
                                      kcm::testing::Conn& c) { c.Respond(200, req.body); });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  controller::RestTypedClient<api::ReplicaSet> rc(*rest);
  api::Decoder decoder;
  auto rs = api::DecodeReplicaSet(decoder, api::JsonInput(raw));
  ASSERT_TRUE(rs.ok()) << rs.error().ToString();
  api::ReplicaSetStatus status;
  status.replicas = 2;
  status.ready_replicas = 2;
  status.observed_generation = 3;
  auto updated = rc.UpdateStatus(**rs, status);
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_EQ((*updated)->status.ready_replicas, 2);

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].path, "/apis/apps/v1/namespaces/ns/replicasets/rs/status");
  auto sent = json::Parse(reqs[0].body);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(json::GetPath(*sent, {"metadata", "resourceVersion"})->as_string(), "42");
  EXPECT_NE(json::GetPath(*sent, {"metadata", "futureMeta"}), nullptr);
  EXPECT_EQ(json::GetPath(*sent, {"spec", "futureSpec"})->as_string(), "x");
  EXPECT_NE(json::GetPath(*sent, {"status", "futureStatus"}), nullptr);
  EXPECT_EQ(json::GetPath(*sent, {"status", "readyReplicas"})->as_int64(), 2);
  EXPECT_EQ(json::GetPath(*sent, {"status", "observedGeneration"})->as_int64(), 3);
}

}  // namespace
}  // namespace kcm::replicaset
