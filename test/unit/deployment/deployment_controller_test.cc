// Unit tests of the Deployment controller's handlers and syncDeployment (upstream
// deployment_controller.go): which Deployments an event enqueues, the order of a sync. The fixture
// (test/unit/deployment/fixture.h) wires a recording fake client, listers over indexers filled
// directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- handlers (addReplicaSet, updateReplicaSet, deleteReplicaSet, deletePod) ---------------------
TEST_F(DeploymentControllerTest, ReplicaSetEventsEnqueueOwnerOrMatchingDeployments) {
  auto foo = MakeDeployment();
  auto other = MakeDeployment(
      {.name = "bar", .uid = "bar-uid", .selector = R"({"matchLabels":{"app":"bar"}})"});
  Add(foo);
  Add(other);
  auto owned = MakeRS(*foo, {.name = "owned"});
  auto orphan = MakeRS(*foo, {.name = "orphan", .owned = false});
  auto foreign = MakeRS(*foo, {.name = "foreign", .owner_uid = "someone-else"});

  EXPECT_THAT(Keys(controller_->OnReplicaSetAdd(*owned)), ElementsAre("default/foo"));
  // An orphan goes to every Deployment whose selector matches it (only foo).
  EXPECT_THAT(Keys(controller_->OnReplicaSetAdd(*orphan)), ElementsAre("default/foo"));
  // A controllerRef whose UID is not the cached Deployment's is not followed.
  EXPECT_THAT(Keys(controller_->OnReplicaSetAdd(*foreign)), IsEmpty());
  // Update with an unchanged resourceVersion (a resync) is ignored.
  EXPECT_THAT(Keys(controller_->OnReplicaSetUpdate(*owned, *owned)), IsEmpty());
  // Owner changed: the old and the new owner both sync.
  api::ReplicaSet moved = *owned;
  moved.metadata.resource_version = "11";
  auto refs = moved.metadata.owner_references.ToVector();
  refs[0].name = "bar";
  refs[0].uid = "bar-uid";
  moved.metadata.owner_references = std::move(refs);
  EXPECT_THAT(Keys(controller_->OnReplicaSetUpdate(*owned, moved)),
              ElementsAre("default/foo", "default/bar"));
  EXPECT_THAT(Keys(controller_->OnReplicaSetDelete(*owned)), ElementsAre("default/foo"));
  EXPECT_THAT(Keys(controller_->OnReplicaSetDelete(*orphan)), IsEmpty());
  EXPECT_STREQ(kControllerName, "deployment");
  EXPECT_EQ(kMaxRetries, 15);
}

TEST_F(DeploymentControllerTest, PodDeleteSyncsRecreateDeploymentOnceNoPodsRemain) {
  auto d = MakeDeployment({.strategy = "Recreate"});
  Add(d);
  auto rs = MakeRS(*d, {.replicas = 0});
  Add(rs);
  auto gone = MakePod("p1", *rs);
  auto remaining = MakePod("p2", *rs);
  Add(remaining);
  EXPECT_THAT(Keys(controller_->OnPodDelete(*gone)), IsEmpty());
  ASSERT_TRUE(pod_index_->Delete(remaining).ok());
  EXPECT_THAT(Keys(controller_->OnPodDelete(*gone)), ElementsAre("default/foo"));
  // A RollingUpdate Deployment does not care about pod deletions.
  auto rolling = MakeDeployment({.name = "roll", .uid = "roll-uid"});
  Add(rolling);
  auto rolling_rs = MakeRS(*rolling, {.name = "roll-rs"});
  Add(rolling_rs);
  EXPECT_THAT(Keys(controller_->OnPodDelete(*MakePod("p3", *rolling_rs))), IsEmpty());
}

// --- syncDeployment ------------------------------------------------------------------------------
TEST_F(DeploymentControllerTest, NotFoundIsNotAnError) {
  EXPECT_TRUE(Sync("missing").ok());
  EXPECT_THAT(actions_->Actions(), IsEmpty());
}

TEST_F(DeploymentControllerTest, EmptySelectorWarnsAndOnlyUpdatesObservedGeneration) {
  Add(MakeDeployment({.generation = 4, .selector = "{}"}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->Events(),
              ElementsAre("Warning SelectingAll This deployment is selecting all pods. A "
                          "non-empty selector is required."));
  ASSERT_EQ(actions_->Actions().size(), 1u);
  EXPECT_EQ(LastStatus()->status.observed_generation, 4);
}

TEST_F(DeploymentControllerTest, AdoptsMatchingOrphanReplicaSets) {
  auto d = MakeDeployment();
  Add(d);
  deployments_->Set(d);
  auto orphan = MakeRS(*d, {.replicas = 3, .owned = false});
  Add(orphan);
  ASSERT_TRUE(Sync().ok());
  auto patches = Of("patch", "replicasets");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_THAT(patches[0].body, ::testing::HasSubstr("\"uid\":\"d-uid\""));
  // The adopted RS is the new RS (same template): nothing is created.
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());
}

TEST_F(DeploymentControllerTest, DeletingDeploymentOnlySyncsStatus) {
  auto d = MakeDeployment({.image = "img:2", .deleting = true});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 3}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());
  EXPECT_THAT(Of("update", "replicasets"), IsEmpty());
  EXPECT_EQ(LastStatus()->status.replicas, 3);
}

// With a real (not running) ReplicaSet informer the controller claims through its controllerUID
// index: its own ReplicaSet and the namespace's orphans, never one controlled by another
// Deployment nor one in another namespace that names its UID.
class DeploymentControllerIndexTest : public DeploymentControllerTest {
 protected:
  DeploymentControllerIndexTest() {
    cache::SharedIndexInformerOptions o;
    o.name = "ReplicaSet";
    o.indexers = {{cache::kNamespaceIndex, cache::MetaNamespaceIndexFunc}};
    rs_informer_ = std::make_shared<cache::SharedIndexInformer>(nullptr, o);
    rs_index_ = rs_informer_->GetIndexer();
    DeploymentControllerOptions opts;
    opts.clock = &clock_;
    controller_ = std::make_unique<DeploymentController>(
        informers::TypedInformer<api::Deployment>{nullptr, informers::DeploymentLister(d_index_)},
        informers::TypedInformer<api::ReplicaSet>{rs_informer_,
                                                  informers::ReplicaSetLister(rs_index_)},
        informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, deployments_,
        replicasets_, recorder_, opts);
  }
  std::shared_ptr<cache::SharedIndexInformer> rs_informer_;
};

TEST_F(DeploymentControllerIndexTest, ClaimsOwnAndOrphanReplicaSetsThroughTheIndex) {
  EXPECT_TRUE(rs_index_->GetIndexers().contains("controllerUID"));
  auto d = MakeDeployment();
  Add(d);
  deployments_->Set(d);
  Add(MakeRS(*d, {.replicas = 3}));  // Ours, the new ReplicaSet: nothing to create.
  Add(MakeRS(*d, {.name = "orphan", .image = "img:0", .owned = false}));
  Add(MakeRS(*d, {.name = "others", .image = "img:0", .replicas = 2, .owner_uid = "other-uid"}));
  auto elsewhere = MakeDeployment({.ns = "elsewhere"});
  Add(MakeRS(*elsewhere,
             {.name = "elsewhere", .image = "img:0", .replicas = 2}));  // Names d-uid, other ns.
  ASSERT_TRUE(Sync().ok());
  auto patches = Of("patch", "replicasets");
  ASSERT_EQ(patches.size(), 1u);  // The adoption of the orphan only.
  EXPECT_THAT(patches[0].body, ::testing::HasSubstr("\"uid\":\"d-uid\""));
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());
  // Only the claimed ones count in the status: ours (3) and the adopted orphan (0), not the
  // others' or the other namespace's.
  EXPECT_EQ(LastStatus()->status.replicas, 3);
  EXPECT_FALSE(ScaledTo().contains("others"));
  EXPECT_FALSE(ScaledTo().contains("elsewhere"));
}

}  // namespace
}  // namespace kcm::deployment::testing
