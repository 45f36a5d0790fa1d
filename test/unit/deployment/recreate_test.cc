// Unit tests of the Deployment controller's Recreate (upstream recreate.go): old ReplicaSets to
// zero and their pods gone before the new one scales up. The fixture
// (test/unit/deployment/fixture.h) wires a recording fake client, listers over indexers filled
// directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- rolloutRecreate -----------------------------------------------------------------------------
TEST_F(DeploymentControllerTest, RecreateScalesOldToZeroBeforeCreatingNew) {
  auto d = MakeDeployment({.image = "img:2", .strategy = "Recreate"});
  Add(d);
  auto old = MakeRS(*d, {.image = "img:1", .replicas = 3});
  Add(old);
  ASSERT_TRUE(Sync().ok());
  EXPECT_EQ(ScaledTo(), (std::map<std::string, int32_t>{{old->metadata.name, 0}}));
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());

  // Scaled to zero but a pod still runs: still no new RS.
  actions_->Clear();
  auto drained = MakeRS(*d, {.image = "img:1", .replicas = 0});
  Reset(rs_index_, {drained});
  auto pod = MakePod("p", *drained);
  Add(pod);
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());

  // Pods gone (a Succeeded one does not count): the new RS is created at full size.
  ASSERT_TRUE(pod_index_->Delete(pod).ok());
  Add(MakePod("done", *drained, "Succeeded"));
  ASSERT_TRUE(Sync().ok());
  auto created = WrittenRS("create");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]->spec.replicas, 3);
}

}  // namespace
}  // namespace kcm::deployment::testing
