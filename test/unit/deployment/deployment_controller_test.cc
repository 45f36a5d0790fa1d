// Unit tests of the Deployment controller's sync (spec D1–D18) with a recording fake client,
// listers over indexers filled directly, a FakeRecorder and a FakeClock.
#include "controllers/deployment/deployment_controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// The keys of what a handler asks to enqueue, in order.
std::vector<std::string> Keys(const std::vector<runtime::Request>& requests) {
  std::vector<std::string> keys;
  for (const auto& r : requests) keys.push_back(r.Key());
  return keys;
}

const api::Condition* Cond(const api::Deployment& d, std::string_view type) {
  return util::GetDeploymentCondition(d.status, type);
}

// --- D1 handlers ------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D1_ReplicaSetEventsEnqueueOwnerOrMatchingDeployments) {
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
  moved.metadata.owner_references[0].name = "bar";
  moved.metadata.owner_references[0].uid = "bar-uid";
  EXPECT_THAT(Keys(controller_->OnReplicaSetUpdate(*owned, moved)),
              ElementsAre("default/foo", "default/bar"));
  EXPECT_THAT(Keys(controller_->OnReplicaSetDelete(*owned)), ElementsAre("default/foo"));
  EXPECT_THAT(Keys(controller_->OnReplicaSetDelete(*orphan)), IsEmpty());
  EXPECT_STREQ(kControllerName, "deployment");
  EXPECT_EQ(kMaxRetries, 15);
}

TEST_F(DeploymentControllerTest, D1_PodDeleteSyncsRecreateDeploymentOnceNoPodsRemain) {
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

// --- D2 sync order ----------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D2_NotFoundIsNotAnError) {
  EXPECT_TRUE(Sync("missing").ok());
  EXPECT_THAT(client_->actions, IsEmpty());
}

TEST_F(DeploymentControllerTest, D2_EmptySelectorWarnsAndOnlyUpdatesObservedGeneration) {
  Add(MakeDeployment({.generation = 4, .selector = "{}"}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->Events(),
              ElementsAre("Warning SelectingAll This deployment is selecting all pods. A "
                          "non-empty selector is required."));
  ASSERT_EQ(client_->actions.size(), 1u);
  EXPECT_EQ(client_->LastStatus()->status.observed_generation, 4);
}

TEST_F(DeploymentControllerTest, D2_AdoptsMatchingOrphanReplicaSets) {
  auto d = MakeDeployment();
  Add(d);
  client_->fresh_deployment = d;
  auto orphan = MakeRS(*d, {.replicas = 3, .owned = false});
  Add(orphan);
  ASSERT_TRUE(Sync().ok());
  auto patches = client_->Of("patch", "replicasets");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_THAT(patches[0].body, ::testing::HasSubstr("\"uid\":\"d-uid\""));
  // The adopted RS is the new RS (same template): nothing is created.
  EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());
}

TEST_F(DeploymentControllerTest, D2_DeletingDeploymentOnlySyncsStatus) {
  auto d = MakeDeployment({.image = "img:2", .deleting = true});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 3}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());
  EXPECT_THAT(client_->Of("update", "replicasets"), IsEmpty());
  EXPECT_EQ(client_->LastStatus()->status.replicas, 3);
}

// --- D4, D5, D17: creating the new RS ---------------------------------------------------------

TEST_F(DeploymentControllerTest, D4_D5_D17_NewReplicaSetNameLabelsRevisionAndEvent) {
  auto d = MakeDeployment({.image = "img:2", .annotations = {{"kubernetes.io/change-cause", "x"}}});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 0, .revision = 1, .created_minute = 1}));
  Add(MakeRS(*d, {.image = "img:0", .replicas = 0, .revision = 2, .created_minute = 0}));
  ASSERT_TRUE(Sync().ok());
  auto created = client_->WrittenRS("create");
  ASSERT_EQ(created.size(), 1u);
  const auto& rs = *created[0];
  const std::string hash = api::ComputePodTemplateHash(Template("img:2"), std::nullopt);
  EXPECT_EQ(rs.metadata.name, "foo-" + hash);
  EXPECT_EQ(rs.metadata.labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.spec.selector->match_labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.spec.pod_template.labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.metadata.ControllerRef()->uid, "d-uid");
  EXPECT_EQ(rs.spec.replicas, 3);  // no old replicas: straight to size (D7)
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/desired-replicas"), "3");
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/max-replicas"), "4");
  EXPECT_EQ(rs.metadata.annotations.at("kubernetes.io/change-cause"), "x");
  EXPECT_THAT(
      recorder_->Events(),
      ElementsAre("Normal ScalingReplicaSet Scaled up replica set foo-" + hash + " from 0 to 3"));
  auto status = client_->LastStatus();
  EXPECT_EQ(status->metadata.annotations.at("deployment.kubernetes.io/revision"), "3");
  // D13: the first condition of a rollout.
  const api::Condition* progressing = Cond(*status, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->reason, "NewReplicaSetCreated");
  EXPECT_EQ(progressing->message, "Created new replica set \"foo-" + hash + "\"");
}

TEST_F(DeploymentControllerTest, D4_HashCollisionBumpsCollisionCount) {
  auto d = MakeDeployment({.image = "img:2"});
  Add(d);
  const std::string hash = api::ComputePodTemplateHash(Template("img:2"), std::nullopt);
  // Another RS (different template) already holds the name the new RS would get.
  Add(MakeRS(*d, {.name = "foo-" + hash, .image = "img:1", .replicas = 1}));
  client_->fail["create replicasets"] = Error{409, "AlreadyExists", "exists", {}};
  EXPECT_FALSE(Sync().ok());
  auto status = client_->LastStatus();
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->status.collision_count, 1);
  // With collisionCount 1 the next hash (and name) differ.
  EXPECT_NE(api::ComputePodTemplateHash(Template("img:2"), 1), hash);
}

TEST_F(DeploymentControllerTest, D4_CreateFailureSetsReplicaSetCreateError) {
  Add(MakeDeployment({.image = "img:2"}));
  client_->fail["create replicasets"] = Error{403, "Forbidden", "quota exceeded", {}};
  EXPECT_FALSE(Sync().ok());
  auto last_c = client_->LastStatus();
  ASSERT_NE(last_c, nullptr);
  const api::Condition* c = Cond(*last_c, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "ReplicaSetCreateError");
  ASSERT_EQ(recorder_->Events().size(), 1u);
  EXPECT_THAT(recorder_->Events()[0], ::testing::StartsWith("Warning ReplicaSetCreateError"));
}

// Upstream getNewReplicaSet returns the NamespaceTerminating create error without a condition or
// event, and handleErr forgets the key for it: no retries against a namespace that is going away.
TEST_F(DeploymentControllerTest, D4_CreateInTerminatingNamespaceIsForgotten) {
  Add(MakeDeployment({.image = "img:2"}));
  Error terminating{403, "Forbidden", "namespace is being terminated", {"NamespaceTerminating"}};
  client_->fail["create replicasets"] = terminating;
  Status s = Sync();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(recorder_->Events().empty());
  Result<runtime::ReconcileResult> handled = DeploymentController::HandleErr(s.error());
  ASSERT_TRUE(handled.ok());
  EXPECT_FALSE(handled->requeue);
  EXPECT_EQ(handled->requeue_after, std::chrono::nanoseconds::zero());
  // Reconcile applies it: the runtime forgets the key.
  Result<runtime::ReconcileResult> reconciled = Reconcile();
  ASSERT_TRUE(reconciled.ok());
  EXPECT_FALSE(reconciled->requeue);
  // Any other error is still retried.
  EXPECT_FALSE(DeploymentController::HandleErr(Error{403, "Forbidden", "quota", {}}).ok());
  // A successful sync's result passes through unchanged.
  Result<runtime::ReconcileResult> passed = DeploymentController::HandleErr(
      runtime::ReconcileResult{.requeue_after = std::chrono::seconds(7)});
  ASSERT_TRUE(passed.ok());
  EXPECT_EQ(passed->requeue_after, std::chrono::seconds(7));
}

// --- D7, D8: rolling update arithmetic ----------------------------------------------------------

TEST_F(DeploymentControllerTest, D7_D8_RollingUpdateTable) {
  struct OldRS {
    std::string image;
    int32_t spec, available;
  };
  struct Case {
    std::string name;
    int32_t replicas;
    std::string surge, unavailable;
    int32_t new_spec, new_available;
    std::vector<OldRS> olds;
    std::map<std::string, int32_t> want;  // by image → new spec; RSs not listed are not scaled
  };
  const std::vector<Case> cases = {
      {"surge first", 10, "3", "2", 0, 0, {{"img:1", 10, 10}}, {{"img:2", 3}}},
      {"no surge: old scaled down by maxUnavailable",
       10,
       "0",
       "2",
       0,
       0,
       {{"img:1", 10, 10}},
       {{"img:1", 8}}},
      {"unhealthy old replicas cleaned up first",
       10,
       "0",
       "2",
       0,
       0,
       {{"img:1", 10, 7}},
       {{"img:1", 8}}},
      {"unavailable new pods block scale down", 10, "2", "0", 2, 0, {{"img:1", 10, 10}}, {}},
      {"available new pods free old ones", 10, "2", "0", 2, 2, {{"img:1", 10, 10}}, {{"img:1", 8}}},
      {"oldest old RS first",
       4,
       "0",
       "2",
       0,
       0,
       {{"img:0", 2, 2}, {"img:1", 2, 2}},
       {{"img:0", 0}}},
      {"new RS above size scales down", 3, "1", "0", 5, 5, {}, {{"img:2", 3}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    client_->actions.clear();
    Reset(d_index_);
    Reset(rs_index_);
    DeploymentSpec spec{.replicas = c.replicas,
                        .image = "img:2",
                        .max_surge = c.surge,
                        .max_unavailable = c.unavailable};
    auto d = MakeDeployment(spec);
    Add(d);
    Add(MakeRS(*d, {.image = "img:2",
                    .replicas = c.new_spec,
                    .available = c.new_available,
                    .revision = 9,
                    .created_minute = 30}));
    int minute = 0;
    for (const auto& o : c.olds) {
      Add(MakeRS(*d, {.image = o.image,
                      .replicas = o.spec,
                      .available = o.available,
                      .revision = 1 + minute,
                      .created_minute = minute}));
      ++minute;
    }
    ASSERT_TRUE(Sync().ok());
    std::map<std::string, int32_t> got;
    for (const auto& rs : client_->WrittenRS("update")) {
      auto tmpl = rs->spec.pod_template.ToJson();
      std::string image =
          (*tmpl).Find("spec")->Find("containers")->as_array()[0].Find("image")->as_string();
      got[image] = rs->spec.replicas;
    }
    EXPECT_EQ(got, c.want);
  }
}

// D8: an old RS whose status still counts more available pods than its (reduced) spec must not
// drive the scale-down: nothing is scaled (found by the e2e proportional-scaling test: scaling
// down from stale counts emptied the old RS). As upstream reconcileOldReplicaSets, the sync itself
// does not fail for it.
TEST_F(DeploymentControllerTest, D8_StaleOldStatusStopsTheScaleDown) {
  auto d =
      MakeDeployment({.replicas = 10, .image = "img:2", .max_surge = "0", .max_unavailable = "5"});
  Add(d);
  Add(MakeRS(
      *d, {.image = "img:2", .replicas = 3, .available = 0, .revision = 2, .created_minute = 5}));
  Add(MakeRS(*d, {.image = "img:1", .replicas = 7, .available = 8, .revision = 1}));
  EXPECT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("update", "replicasets"), IsEmpty());
}

// --- D9 proportional scaling --------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D9_ProportionalScalingTable) {
  struct RS {
    std::string image;
    int32_t spec;
  };
  struct Case {
    std::string name;
    int32_t replicas;
    std::string surge;
    std::vector<RS> rss;  // oldest first; the last one has the Deployment's template
    int32_t annotated_desired, annotated_max;
    std::map<std::string, int32_t> want;
  };
  const std::vector<Case> cases = {
      {"scale up 10 → 20 mid-rollout",
       20,
       "3",
       {{"img:1", 8}, {"img:2", 5}},
       10,
       13,
       {{"img:1", 14}, {"img:2", 9}}},
      {"scale down 10 → 5 mid-rollout",
       5,
       "3",
       {{"img:1", 8}, {"img:2", 5}},
       10,
       13,
       {{"img:1", 5}, {"img:2", 3}}},
      {"leftover to the newest of equal sizes when scaling up",
       4,
       "0",
       {{"img:0", 1}, {"img:1", 1}, {"img:2", 1}},
       3,
       3,
       {{"img:0", 1}, {"img:1", 1}, {"img:2", 2}}},
      {"equal sizes: oldest shrinks first when scaling down",
       4,
       "0",
       {{"img:0", 2}, {"img:1", 2}, {"img:2", 2}},
       6,
       6,
       {{"img:0", 1}, {"img:1", 1}, {"img:2", 2}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    client_->actions.clear();
    Reset(d_index_);
    Reset(rs_index_);
    auto d = MakeDeployment({.replicas = c.replicas,
                             .image = c.rss.back().image,
                             .max_surge = c.surge,
                             .max_unavailable = "1"});
    Add(d);
    int minute = 0;
    for (const auto& r : c.rss) {
      Add(MakeRS(
          *d,
          {.image = r.image,
           .replicas = r.spec,
           .available = 0,
           .revision = 1 + minute,
           .created_minute = minute,
           .annotations = {
               {"deployment.kubernetes.io/desired-replicas", std::to_string(c.annotated_desired)},
               {"deployment.kubernetes.io/max-replicas", std::to_string(c.annotated_max)}}}));
      ++minute;
    }
    ASSERT_TRUE(Sync().ok());
    std::map<std::string, int32_t> got;
    for (const auto& rs : client_->WrittenRS("update")) {
      auto tmpl = rs->spec.pod_template.ToJson();
      got[(*tmpl).Find("spec")->Find("containers")->as_array()[0].Find("image")->as_string()] =
          rs->spec.replicas;
      EXPECT_EQ(rs->metadata.annotations.at("deployment.kubernetes.io/desired-replicas"),
                std::to_string(c.replicas));
    }
    EXPECT_EQ(got, c.want);
    EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());
  }
}

// --- D10 Recreate -------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D10_RecreateScalesOldToZeroBeforeCreatingNew) {
  auto d = MakeDeployment({.image = "img:2", .strategy = "Recreate"});
  Add(d);
  auto old = MakeRS(*d, {.image = "img:1", .replicas = 3});
  Add(old);
  ASSERT_TRUE(Sync().ok());
  EXPECT_EQ(ScaledTo(), (std::map<std::string, int32_t>{{old->metadata.name, 0}}));
  EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());

  // Scaled to zero but a pod still runs: still no new RS.
  client_->actions.clear();
  auto drained = MakeRS(*d, {.image = "img:1", .replicas = 0});
  Reset(rs_index_, {drained});
  auto pod = MakePod("p", *drained);
  Add(pod);
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());

  // Pods gone (a Succeeded one does not count): the new RS is created at full size.
  ASSERT_TRUE(pod_index_->Delete(pod).ok());
  Add(MakePod("done", *drained, "Succeeded"));
  ASSERT_TRUE(Sync().ok());
  auto created = client_->WrittenRS("create");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0]->spec.replicas, 3);
}

// --- D11 pause --------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D11_PausedDoesNotRollOutAndReportsPaused) {
  auto d = MakeDeployment({.image = "img:2", .paused = true});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 3}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("create", "replicasets"), IsEmpty());
  auto last_c = client_->LastStatus();
  ASSERT_NE(last_c, nullptr);
  const api::Condition* c = Cond(*last_c, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "Unknown");
  EXPECT_EQ(c->reason, "DeploymentPaused");
  EXPECT_EQ(c->message, "Deployment is paused");
}

TEST_F(DeploymentControllerTest, D11_PausedStillScalesAndResumeIsReported) {
  auto d = MakeDeployment({.replicas = 5, .paused = true});
  Add(d);
  auto rs = MakeRS(*d, {.replicas = 3});
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  EXPECT_EQ(ScaledTo(), (std::map<std::string, int32_t>{{rs->metadata.name, 5}}));

  client_->actions.clear();
  Reset(
      d_index_,
      {MakeDeployment({.replicas = 5,
                       .status = R"({"conditions":[{"type":"Progressing","status":"Unknown",)"
                                 R"("reason":"DeploymentPaused","message":"Deployment is paused",)"
                                 R"("lastUpdateTime":"2023-11-14T22:00:00Z",)"
                                 R"("lastTransitionTime":"2023-11-14T22:00:00Z"}]})"})});
  ASSERT_TRUE(Sync().ok());
  auto writes = client_->Of("update-status", "deployments");
  ASSERT_FALSE(writes.empty());
  auto first = DecodeD(writes.front().body);
  const api::Condition* c = Cond(*first, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "DeploymentResumed");
  EXPECT_EQ(c->message, "Deployment is resumed");
}

// --- D12 rollback -------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D12_RollbackAnnotationCopiesTemplateAndIsCleared) {
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
  auto updates = client_->Of("update", "deployments");
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

TEST_F(DeploymentControllerTest, D12_RollbackToMissingOrSameRevision) {
  auto d = MakeDeployment({.annotations = {{"deprecated.deployment.rollback.to", "7"}}});
  Add(d);
  Add(MakeRS(*d, {.replicas = 3, .revision = 1}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->TakeEvents(),
              ElementsAre("Warning DeploymentRollbackRevisionNotFound Unable to find the "
                          "revision to rollback to."));
  ASSERT_EQ(client_->Of("update", "deployments").size(), 1u);
  EXPECT_EQ(DecodeD(client_->Of("update", "deployments")[0].body)
                ->metadata.annotations.count("deprecated.deployment.rollback.to"),
            0u);

  Reset(d_index_, {MakeDeployment({.annotations = {{"deprecated.deployment.rollback.to", "1"}}})});
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->TakeEvents(),
              ElementsAre("Warning DeploymentRollbackTemplateUnchanged The rollback revision "
                          "contains the same template as current deployment \"foo\""));
}

// --- D13 progress -------------------------------------------------------------------------------

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
TEST_F(DeploymentControllerTest, D13_NoProgressRequeuesJustAfterTheDeadline) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(100, rs->metadata.name));
  Add(rs);
  Result<runtime::ReconcileResult> r = Reconcile();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_THAT(client_->actions, IsEmpty());  // nothing changed, nothing written
  // The progress check comes back in the result, not through the queue.
  EXPECT_EQ(r->requeue_after, std::chrono::seconds(501));
  EXPECT_FALSE(r->requeue);
}

TEST_F(DeploymentControllerTest, D13_LessThanASecondLeftRequeuesRateLimitedNow) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(600, rs->metadata.name));  // the deadline is now
  Add(rs);
  Result<runtime::ReconcileResult> r = Reconcile();
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r->requeue);
  EXPECT_EQ(r->requeue_after, std::chrono::nanoseconds::zero());
}

TEST_F(DeploymentControllerTest, D13_DeadlineExceeded) {
  auto base = MakeDeployment();
  auto rs = MakeRS(*base, {.replicas = 3, .available = 0});
  Add(StuckDeployment(700, rs->metadata.name));
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  auto last_c = client_->LastStatus();
  ASSERT_NE(last_c, nullptr);
  const api::Condition* c = Cond(*last_c, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "ProgressDeadlineExceeded");
  EXPECT_EQ(c->message, "ReplicaSet \"" + rs->metadata.name + "\" has timed out progressing.");
}

TEST_F(DeploymentControllerTest, D13_D14_CompleteRolloutConditions) {
  auto d = MakeDeployment();
  auto rs = MakeRS(*d, {.replicas = 3});
  Add(d);
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  auto status = client_->LastStatus();
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

TEST_F(DeploymentControllerTest, D14_AvailableFalseBelowMinimum) {
  auto d = MakeDeployment({.replicas = 4, .max_unavailable = "1"});
  Add(d);
  Add(MakeRS(*d, {.replicas = 4, .available = 2}));
  ASSERT_TRUE(Sync().ok());
  auto last_a = client_->LastStatus();
  ASSERT_NE(last_a, nullptr);
  const api::Condition* a = Cond(*last_a, "Available");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->status, "False");
  EXPECT_EQ(a->reason, "MinimumReplicasUnavailable");
}

// --- D15 status -------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D15_StatusCountsAndNoWriteWhenUnchanged) {
  auto d =
      MakeDeployment({.generation = 2, .image = "img:2", .max_surge = "1", .max_unavailable = "0"});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 2, .available = 2, .revision = 1}));
  Add(MakeRS(*d, {.image = "img:2", .replicas = 2, .available = 1, .revision = 2}));
  ASSERT_TRUE(Sync().ok());
  auto status = client_->LastStatus();
  EXPECT_EQ(status->status.observed_generation, 2);
  EXPECT_EQ(status->status.replicas, 4);
  EXPECT_EQ(status->status.updated_replicas, 2);
  EXPECT_EQ(status->status.ready_replicas, 3);
  EXPECT_EQ(status->status.available_replicas, 3);
  EXPECT_EQ(status->status.unavailable_replicas, 1);
  EXPECT_THAT(client_->Of("update", "replicasets"), IsEmpty());

  // Fed back, the same world produces no write.
  client_->actions.clear();
  Reset(d_index_, {status});
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("update-status", "deployments"), IsEmpty());
}

// Upstream cleanupUnhealthyReplicas/reconcileOldReplicaSets: an old RS whose status still counts
// more available pods than its (just lowered) spec cannot be cleaned up. cleanupUnhealthyReplicas
// fails with the counts in the message, but reconcileOldReplicaSets drops that error: the sync
// scales nothing, writes the rollout status and succeeds (no retry loop until the status catches
// up; the RS controller's status write brings the next sync).
TEST_F(DeploymentControllerTest, D8_StaleOldReplicaSetStatusSkipsScaleDownWithoutFailing) {
  auto d =
      MakeDeployment({.replicas = 7, .image = "img:2", .max_surge = "2", .max_unavailable = "1"});
  Add(d);
  Add(MakeRS(
      *d, {.image = "img:2", .replicas = 4, .available = 4, .revision = 2, .created_minute = 30}));
  auto old_rs = MakeRS(
      *d, {.image = "img:1", .replicas = 5, .status_replicas = 7, .available = 7, .revision = 1});
  Add(old_rs);
  ASSERT_TRUE(Sync().ok());
  for (const auto& rs : client_->WrittenRS("update")) {  // annotations may be synced, sizes not
    EXPECT_EQ(rs->spec.replicas, rs->metadata.name == old_rs->metadata.name ? 5 : 4)
        << rs->metadata.name;
  }
  EXPECT_NE(client_->LastStatus(), nullptr);  // the rollout status is still written

  util::ReplicaSets olds = {old_rs};
  Result<int32_t> cleaned = controller_->CleanupUnhealthyReplicas(olds, *d, 1);
  ASSERT_FALSE(cleaned.ok());
  EXPECT_EQ(cleaned.error().message,
            "when cleaning up unhealthy replicas, got invalid request to scale down default/" +
                old_rs->metadata.name + " 5 -> 7");
}

// --- D16 cleanup ------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D16_CleanupDeletesOnlyEligibleOldestBeyondLimit) {
  auto d = MakeDeployment({.image = "img:9",
                           .revision_history_limit = 1,
                           .status = R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,)"
                                     R"("availableReplicas":3})"});
  Add(d);
  Add(MakeRS(*d, {.image = "img:9", .replicas = 3, .revision = 5}));
  auto r1 = MakeRS(*d, {.image = "img:1", .replicas = 0, .revision = 1});
  auto r2 = MakeRS(*d, {.image = "img:2", .replicas = 0, .status_replicas = 1, .revision = 2});
  auto r3 = MakeRS(*d, {.image = "img:3", .replicas = 0, .revision = 3});
  auto r4 = MakeRS(
      *d,
      {.image = "img:4", .replicas = 0, .revision = 4, .generation = 3, .observed_generation = 2});
  for (const auto& rs : {r1, r2, r3, r4}) Add(rs);
  ASSERT_TRUE(Sync().ok());
  // 4 old, limit 1: the 3 lowest revisions are candidates; r2 still has a pod.
  std::vector<std::string> deleted;
  for (const auto& a : client_->Of("delete", "replicasets")) deleted.push_back(a.name);
  EXPECT_THAT(deleted, UnorderedElementsAre(r1->metadata.name, r3->metadata.name));
}

// --- D17 events -------------------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D17_ScaleDownEvent) {
  auto d =
      MakeDeployment({.replicas = 10, .image = "img:2", .max_surge = "0", .max_unavailable = "2"});
  Add(d);
  auto old = MakeRS(*d, {.image = "img:1", .replicas = 10, .revision = 1});
  Add(old);
  Add(MakeRS(*d, {.image = "img:2", .replicas = 0, .revision = 2}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(recorder_->Events(), ElementsAre("Normal ScalingReplicaSet Scaled down replica set " +
                                               old->metadata.name + " from 10 to 8"));
}

// --- D18 no re-defaulting -----------------------------------------------------------------------

TEST_F(DeploymentControllerTest, D18_WritesNeverAddDefaultsToTheDeployment) {
  DeploymentSpec spec{.max_surge = std::nullopt,
                      .max_unavailable = std::nullopt,
                      .progress_deadline = std::nullopt,
                      .revision_history_limit = std::nullopt};
  auto d = MakeDeployment(spec);
  Add(d);
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(client_->Of("update", "deployments"), IsEmpty());
  auto writes = client_->Of("update-status", "deployments");
  ASSERT_FALSE(writes.empty());
  auto orig_spec = *Parse(d->raw_json).Find("spec");
  for (const auto& w : writes) {
    EXPECT_EQ(*Parse(w.body).Find("spec"), orig_spec);
  }
  // Without a progress deadline there is no Progressing condition.
  auto last = client_->LastStatus();
  EXPECT_EQ(Cond(*last, "Progressing"), nullptr);
  // The absent rollingUpdate block reads as 25%/25% (3 → surge 1): max-replicas 4.
  EXPECT_EQ(client_->WrittenRS("create")[0]->metadata.annotations.at(
                "deployment.kubernetes.io/max-replicas"),
            "4");
}

// Unknown fields survive every write (decision 1).
TEST_F(DeploymentControllerTest, D15_UnknownFieldsSurviveWrites) {
  auto base = MakeDeployment({.replicas = 5});
  auto rs = MakeRS(*base, {.replicas = 3});
  Add(base);
  auto with_extra = DecodeRS(*api::MutateRawJson(rs->raw_json, [](Value& v) {
    return api::json::SetPath(v, {"spec", "futureField"}, Value::String("keep"));
  }));
  Add(with_extra);
  ASSERT_TRUE(Sync().ok());
  auto updates = client_->Of("update", "replicasets");
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_THAT(updates[0].body, ::testing::HasSubstr("\"futureField\":\"keep\""));
}

}  // namespace
}  // namespace kcm::deployment::testing
