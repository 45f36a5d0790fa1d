// Unit tests of the Deployment controller's progress (upstream progress.go): the Progressing and
// Available conditions and requeueStuckDeployment's check, returned in the ReconcileResult. The
// fixture (test/unit/deployment/fixture.h) wires a recording fake client, listers over indexers
// filled directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- syncRolloutStatus, requeueStuckDeployment ---------------------------------------------------
// A rollout stuck with the new RS unavailable; `since` = seconds since the last progress.
std::shared_ptr<const api::Deployment> StuckDeployment(int since, const std::string& rs_name) {
  const std::string t = api::FormatTime(api::Time{} + std::chrono::seconds(1700000000 - since));
  return MakeDeployment(
      {.progress_deadline = 600,
       .annotations = {{"deployment.kubernetes.io/revision", "1"}},
       .status = R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,)"
                 R"("unavailableReplicas":3,"conditions":[{"type":"Available","status":"False",)"
                 R"("reason":"MinimumReplicasUnavailable","message":"Deployment does not have )"
                 R"(minimum availability.","lastUpdateTime":")" +
                 t + R"(","lastTransitionTime":")" + t +
                 R"("},{"type":"Progressing","status":"True","reason":"ReplicaSetUpdated",)"
                 R"("message":"ReplicaSet \")" +
                 rs_name +
                 R"(\" is progressing.",)"
                 R"("lastUpdateTime":")" +
                 t + R"(","lastTransitionTime":")" + t + "\"}]}"});
}

// Upstream requeueStuckDeployment: come back one second after the deadline (against skew in
// AddAfter), or at once, rate-limited, when less than a second is left.
TEST_F(DeploymentControllerTest, NoProgressRequeuesJustAfterTheDeadline) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(100, rs->metadata.name));
  Add(rs);
  Result<runtime::ReconcileResult> r = Reconcile();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_THAT(actions_->Actions(), IsEmpty());  // nothing changed, nothing written
  // The progress check comes back in the result, not through the queue.
  EXPECT_EQ(*r, runtime::RequeueAfter(std::chrono::seconds(501)));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*r));
}

TEST_F(DeploymentControllerTest, LessThanASecondLeftRequeuesRateLimitedNow) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(600, rs->metadata.name));  // the deadline is now
  Add(rs);
  Result<runtime::ReconcileResult> r = Reconcile();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*r));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueAfter>(*r));
}

TEST_F(DeploymentControllerTest, DeadlineExceeded) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(700, rs->metadata.name));
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  auto last_c = LastStatus();
  ASSERT_NE(last_c, nullptr);
  const api::Condition* c = Cond(*last_c, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "ProgressDeadlineExceeded");
  EXPECT_EQ(c->message, "ReplicaSet \"" + rs->metadata.name + "\" has timed out progressing.");
}

TEST_F(DeploymentControllerTest, CompleteRolloutConditions) {
  auto d = MakeDeployment();
  auto rs = MakeRS(*d, {.replicas = 3});
  Add(d);
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  auto status = LastStatus();
  const api::Condition* p = Cond(*status, "Progressing");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason, "NewReplicaSetAvailable");
  EXPECT_EQ(p->message, "ReplicaSet \"" + rs->metadata.name + "\" has successfully progressed.");
  const api::Condition* a = Cond(*status, "Available");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, "True");
  EXPECT_EQ(a->reason, "MinimumReplicasAvailable");
  EXPECT_EQ(a->message, "Deployment has minimum availability.");
}

TEST_F(DeploymentControllerTest, AvailableFalseBelowMinimum) {
  auto d = MakeDeployment({.replicas = 4, .max_unavailable = "1"});
  Add(d);
  Add(MakeRS(*d, {.replicas = 4, .available = 2}));
  ASSERT_TRUE(Sync().ok());
  auto last_a = LastStatus();
  ASSERT_NE(last_a, nullptr);
  const api::Condition* a = Cond(*last_a, "Available");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, "False");
  EXPECT_EQ(a->reason, "MinimumReplicasUnavailable");
}

}  // namespace
}  // namespace kcm::deployment::testing
