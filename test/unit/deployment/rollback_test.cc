// Unit tests of the Deployment controller's rollback (upstream rollback.go): the deprecated
// rollback annotation. The fixture (test/unit/deployment/fixture.h) wires a recording fake client,
// listers over indexers filled directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- rollback ------------------------------------------------------------------------------------
TEST_F(DeploymentControllerTest, RollbackAnnotationCopiesTemplateAndIsCleared) {
  auto d = MakeDeployment({.image = "img:2",
                           .annotations = {{"deprecated.deployment.rollback.to", "1"},
                                           {"kubernetes.io/change-cause", "v2"}}});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1",
                  .replicas = 0,
                  .revision = 1,
                  .annotations = {{"kubernetes.io/change-cause", "v1"}}}));
  Add(MakeRS(*d, {.image = "img:2", .replicas = 3, .revision = 2}));
  ASSERT_TRUE(Sync().ok());
  auto updates = Of("update", "deployments");
  ASSERT_EQ(updates.size(), 1u);
  auto rolled = DecodeD(updates[0].body);
  EXPECT_TRUE(*api::EqualIgnoreHash(rolled->spec.pod_template,
                                    api::PodTemplate{api::json::Serialize(Template("img:1")), {}}));
  EXPECT_EQ(rolled->spec.pod_template.labels.count("pod-template-hash"), 0u);
  EXPECT_EQ(rolled->metadata.annotations.count("deprecated.deployment.rollback.to"), 0u);
  EXPECT_EQ(rolled->metadata.annotations.at("kubernetes.io/change-cause"), "v1");
  EXPECT_THAT(
      recorder_->Events(),
      ElementsAre("Normal DeploymentRollback Rolled back deployment \"foo\" to revision 1"));
}

TEST_F(DeploymentControllerTest, RollbackToMissingOrSameRevision) {
  auto d = MakeDeployment({.annotations = {{"deprecated.deployment.rollback.to", "7"}}});
  Add(d);
  Add(MakeRS(*d, {.replicas = 3, .revision = 1}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->TakeEvents(),
              ElementsAre("Warning DeploymentRollbackRevisionNotFound Unable to find the "
                          "revision to rollback to."));
  ASSERT_EQ(Of("update", "deployments").size(), 1u);
  EXPECT_EQ(DecodeD(Of("update", "deployments")[0].body)
                ->metadata.annotations.count("deprecated.deployment.rollback.to"),
            0u);

  Reset(d_index_, {MakeDeployment({.annotations = {{"deprecated.deployment.rollback.to", "1"}}})});
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->TakeEvents(),
              ElementsAre("Warning DeploymentRollbackTemplateUnchanged The rollback revision "
                          "contains the same template as current deployment \"foo\""));
}

}  // namespace
}  // namespace kcm::deployment::testing
