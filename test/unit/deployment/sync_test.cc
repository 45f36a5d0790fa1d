// Unit tests of the Deployment controller's the shared sync steps (upstream sync.go): the new
// ReplicaSet, proportional scaling, pause, status, history cleanup, events and lossless writes. The
// fixture (test/unit/deployment/fixture.h) wires a recording fake client, listers over indexers
// filled directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- getNewReplicaSet: creating the new RS -------------------------------------------------------
TEST_F(DeploymentControllerTest, NewReplicaSetNameLabelsRevisionAndEvent) {
  auto d = MakeDeployment({.image = "img:2", .annotations = {{"kubernetes.io/change-cause", "x"}}});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 0, .revision = 1, .created_minute = 1}));
  Add(MakeRS(*d, {.image = "img:0", .replicas = 0, .revision = 2, .created_minute = 0}));
  ASSERT_TRUE(Sync().ok());
  auto created = WrittenRS("create");
  ASSERT_EQ(created.size(), 1u);
  const auto& rs = *created[0];
  const std::string hash = api::ComputePodTemplateHash(Template("img:2"), std::nullopt);
  EXPECT_EQ(rs.metadata.name, "foo-" + hash);
  EXPECT_EQ(rs.metadata.labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.spec.selector->match_labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.spec.pod_template.labels.at("pod-template-hash"), hash);
  EXPECT_EQ(rs.metadata.ControllerRef()->uid, "d-uid");
  EXPECT_EQ(rs.spec.replicas, 3);  // no old replicas: straight to size
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/desired-replicas"), "3");
  EXPECT_EQ(rs.metadata.annotations.at("deployment.kubernetes.io/max-replicas"), "4");
  EXPECT_EQ(rs.metadata.annotations.at("kubernetes.io/change-cause"), "x");
  EXPECT_THAT(
      recorder_->Events(),
      ElementsAre("Normal ScalingReplicaSet Scaled up replica set foo-" + hash + " from 0 to 3"));
  auto status = LastStatus();
  EXPECT_EQ(status->metadata.annotations.at("deployment.kubernetes.io/revision"), "3");
  // The first condition of a rollout (Progressing, NewReplicaSetCreated).
  const api::Condition* progressing = Cond(*status, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ(progressing->reason, "NewReplicaSetCreated");
  EXPECT_EQ(progressing->message, "Created new replica set \"foo-" + hash + "\"");
}

TEST_F(DeploymentControllerTest, HashCollisionBumpsCollisionCount) {
  auto d = MakeDeployment({.image = "img:2"});
  Add(d);
  const std::string hash = api::ComputePodTemplateHash(Template("img:2"), std::nullopt);
  // Another RS (different template) already holds the name the new RS would get.
  Add(MakeRS(*d, {.name = "foo-" + hash, .image = "img:1", .replicas = 1}));
  replicasets_->Fail("create", Error{409, "AlreadyExists", "exists", {}});
  EXPECT_FALSE(Sync().ok());
  auto status = LastStatus();
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->status.collision_count, 1);
  // With collisionCount 1 the next hash (and name) differ.
  EXPECT_NE(api::ComputePodTemplateHash(Template("img:2"), 1), hash);
}

TEST_F(DeploymentControllerTest, CreateFailureSetsReplicaSetCreateError) {
  Add(MakeDeployment({.image = "img:2"}));
  replicasets_->Fail("create", Error{403, "Forbidden", "quota exceeded", {}});
  EXPECT_FALSE(Sync().ok());
  auto last_c = LastStatus();
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
TEST_F(DeploymentControllerTest, CreateInTerminatingNamespaceIsForgotten) {
  Add(MakeDeployment({.image = "img:2"}));
  Error terminating{403, "Forbidden", "namespace is being terminated", {"NamespaceTerminating"}};
  replicasets_->Fail("create", terminating);
  Status s = Sync();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(recorder_->Events().empty());
  Result<runtime::ReconcileResult> handled = DeploymentController::HandleErr(s.error());
  ASSERT_TRUE(handled.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*handled));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueAfter>(*handled));
  // Reconcile applies it: the runtime forgets the key.
  Result<runtime::ReconcileResult> reconciled = Reconcile();
  ASSERT_TRUE(reconciled.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*reconciled));
  // Any other error is still retried.
  EXPECT_FALSE(DeploymentController::HandleErr(Error{403, "Forbidden", "quota", {}}).ok());
  // A successful sync's result passes through unchanged.
  Result<runtime::ReconcileResult> passed =
      DeploymentController::HandleErr(runtime::RequeueAfter(std::chrono::seconds(7)));
  ASSERT_TRUE(passed.ok());
  EXPECT_EQ(*passed, runtime::RequeueAfter(std::chrono::seconds(7)));
}

// --- scale: proportional scaling -----------------------------------------------------------------
TEST_F(DeploymentControllerTest, ProportionalScalingTable) {
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
    actions_->Clear();
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
    for (const auto& rs : WrittenRS("update")) {
      auto tmpl = rs->spec.pod_template.ToJson();
      got[(*tmpl).Find("spec")->Find("containers")->as_array()[0].Find("image")->as_string()] =
          rs->spec.replicas;
      EXPECT_EQ(rs->metadata.annotations.at("deployment.kubernetes.io/desired-replicas"),
                std::to_string(c.replicas));
    }
    EXPECT_EQ(got, c.want);
    EXPECT_THAT(Of("create", "replicasets"), IsEmpty());
  }
}

// --- pause (checkPausedConditions, sync) ---------------------------------------------------------
TEST_F(DeploymentControllerTest, PausedDoesNotRollOutAndReportsPaused) {
  auto d = MakeDeployment({.image = "img:2", .paused = true});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 3}));
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(Of("create", "replicasets"), IsEmpty());
  auto last_c = LastStatus();
  ASSERT_NE(last_c, nullptr);
  const api::Condition* c = Cond(*last_c, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "Unknown");
  EXPECT_EQ(c->reason, "DeploymentPaused");
  EXPECT_EQ(c->message, "Deployment is paused");
}

TEST_F(DeploymentControllerTest, PausedStillScalesAndResumeIsReported) {
  auto d = MakeDeployment({.replicas = 5, .paused = true});
  Add(d);
  auto rs = MakeRS(*d, {.replicas = 3});
  Add(rs);
  ASSERT_TRUE(Sync().ok());
  EXPECT_EQ(ScaledTo(), (std::map<std::string, int32_t>{{rs->metadata.name, 5}}));

  actions_->Clear();
  Reset(
      d_index_,
      {MakeDeployment({.replicas = 5,
                       .status = R"({"conditions":[{"type":"Progressing","status":"Unknown",)"
                                 R"("reason":"DeploymentPaused","message":"Deployment is paused",)"
                                 R"("lastUpdateTime":"2023-11-14T22:00:00Z",)"
                                 R"("lastTransitionTime":"2023-11-14T22:00:00Z"}]})"})});
  ASSERT_TRUE(Sync().ok());
  auto writes = Of("update-status", "deployments");
  ASSERT_FALSE(writes.empty());
  auto first = DecodeD(writes.front().body);
  const api::Condition* c = Cond(*first, "Progressing");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, "DeploymentResumed");
  EXPECT_EQ(c->message, "Deployment is resumed");
}

// --- status (calculateStatus, syncDeploymentStatus) ----------------------------------------------
TEST_F(DeploymentControllerTest, StatusCountsAndNoWriteWhenUnchanged) {
  auto d =
      MakeDeployment({.generation = 2, .image = "img:2", .max_surge = "1", .max_unavailable = "0"});
  Add(d);
  Add(MakeRS(*d, {.image = "img:1", .replicas = 2, .available = 2, .revision = 1}));
  Add(MakeRS(*d, {.image = "img:2", .replicas = 2, .available = 1, .revision = 2}));
  ASSERT_TRUE(Sync().ok());
  auto status = LastStatus();
  EXPECT_EQ(status->status.observed_generation, 2);
  EXPECT_EQ(status->status.replicas, 4);
  EXPECT_EQ(status->status.updated_replicas, 2);
  EXPECT_EQ(status->status.ready_replicas, 3);
  EXPECT_EQ(status->status.available_replicas, 3);
  EXPECT_EQ(status->status.unavailable_replicas, 1);
  EXPECT_THAT(Of("update", "replicasets"), IsEmpty());

  // Fed back, the same world produces no write.
  actions_->Clear();
  Reset(d_index_, {status});
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(Of("update-status", "deployments"), IsEmpty());
}

// --- read-your-own-writes ------------------------------------------------------------------------
// Read-your-own-writes (our addition; upstream v1.37 has none for Deployments, whose sync writes on
// whatever the cache holds and fails with a 409 when that predates its own last write): a sync
// waits until the informers applied the status and ReplicaSet writes of the previous sync of the
// same Deployment.
TEST_F(DeploymentControllerTest, SyncWaitsUntilTheInformersAppliedItsOwnWrites) {
  EnableReadYourWrites();
  auto d = MakeDeployment({.replicas = 3});
  Add(d);
  auto rs = MakeRS(*d, {.replicas = 3});
  Add(rs);
  ASSERT_TRUE(Sync().ok());  // the status of a complete rollout (the fake answers 1001, ...)
  ASSERT_FALSE(Of("update-status", "deployments").empty());

  // The Deployment store has applied up to 1000: wait, write nothing, and no requeue (the event
  // of the status write enqueues the Deployment once the store applies it).
  actions_->Clear();
  d_store_rv_ = "1000";
  Result<runtime::ReconcileResult> r = controller_->SyncDeployment("default", "foo");
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(actions_->Actions(), IsEmpty());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*r));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueAfter>(*r));

  // Applied (newer events count too): the sync runs; a scale-up writes the RS (1002).
  d_store_rv_ = "1500";
  Reset(d_index_, {MakeDeployment({.replicas = 5, .status = R"({"observedGeneration":1})"})});
  ASSERT_TRUE(Sync().ok());
  EXPECT_EQ(ScaledTo(), (std::map<std::string, int32_t>{{rs->metadata.name, 5}}));

  // The ReplicaSet store has not applied that update: wait, even though the Deployment store is
  // ahead.
  actions_->Clear();
  d_store_rv_ = "2000";
  r = controller_->SyncDeployment("default", "foo");
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(actions_->Actions(), IsEmpty());
  rs_store_rv_ = "1600";
  ASSERT_TRUE(Sync().ok());
  EXPECT_FALSE(actions_->Actions().empty());  // the cache still has the RS at 3: scaled again
}

TEST_F(DeploymentControllerTest, ReadYourWritesIsPerDeployment) {
  EnableReadYourWrites();
  auto d = MakeDeployment();
  Add(d);
  Add(MakeRS(*d, {.replicas = 3}));
  Add(MakeDeployment(
      {.name = "bar", .uid = "bar-uid", .selector = R"({"matchLabels":{"app":"bar"}})"}));
  ASSERT_TRUE(Sync("foo").ok());  // writes foo's status (1001)
  d_store_rv_ = "1000";
  // Another Deployment is not held back by foo's write: bar's first sync creates its RS.
  actions_->Clear();
  ASSERT_TRUE(Sync("bar").ok());
  EXPECT_EQ(Of("create", "replicasets").size(), 1u);
  actions_->Clear();
  ASSERT_TRUE(Sync("foo").ok());
  EXPECT_THAT(actions_->Actions(), IsEmpty());
}

// Under Run the store hands a waiting Deployment back to the controller's queue (the ready sink)
// as soon as both informers applied its writes: the stale sync says it awaits that wake, and the
// wake comes then, not before.
TEST_F(DeploymentControllerTest, WaitingDeploymentIsWokenWhenTheInformersCatchUp) {
  EnableReadYourWrites();
  controller::ConsistencyStore* store = controller_->consistency_store();
  ASSERT_NE(store, nullptr);
  std::vector<std::string> woken;
  store->SetReadySink([&](const std::string& key) { woken.push_back(key); });
  auto d = MakeDeployment({.replicas = 3});
  Add(d);
  Add(MakeRS(*d, {.replicas = 3}));
  ASSERT_TRUE(Sync().ok());  // writes the status twice (1001, 1002)
  d_store_rv_ = "1000";
  Result<runtime::ReconcileResult> r = controller_->SyncDeployment("default", "foo");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(std::holds_alternative<runtime::reconcile::AwaitWake>(*r));
  store->StoresAdvanced();
  EXPECT_THAT(woken, IsEmpty());
  d_store_rv_ = "1001";  // the first of its two status writes: not yet
  store->StoresAdvanced();
  EXPECT_THAT(woken, IsEmpty());
  d_store_rv_ = "1002";
  store->StoresAdvanced();
  EXPECT_THAT(woken, ElementsAre("default/foo"));
}

// --- cleanupDeployment ---------------------------------------------------------------------------
TEST_F(DeploymentControllerTest, CleanupDeletesOnlyEligibleOldestBeyondLimit) {
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
  for (const auto& a : Of("delete", "replicasets")) deleted.push_back(a.name);
  EXPECT_THAT(deleted, UnorderedElementsAre(r1->metadata.name, r3->metadata.name));
}

// upstream cleanupDeployment deletes the old RSs beyond the limit as its cache shows them; an RS it
// has deleted is gone from a caught-up cache and no longer counts. Ours remembers its own deletes
// until the informer applies them, so a sync that runs before that (the cache still holding the
// deleted RS) does what a caught-up cache would make it do: no second DELETE of the same RS.
TEST_F(DeploymentControllerTest, CleanupDeletesAnOldReplicaSetOnceThoughTheCacheStillHoldsIt) {
  const std::string complete = R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,)"
                               R"("availableReplicas":3})";
  auto d = MakeDeployment({.image = "img:9", .revision_history_limit = 2, .status = complete});
  Add(d);
  Add(MakeRS(*d, {.image = "img:9", .replicas = 3, .revision = 4}));
  auto r1 = MakeRS(*d, {.image = "img:1", .replicas = 0, .revision = 1});
  auto r2 = MakeRS(*d, {.image = "img:2", .replicas = 0, .revision = 2});
  auto r3 = MakeRS(*d, {.image = "img:3", .replicas = 0, .revision = 3});
  for (const auto& rs : {r1, r2, r3}) Add(rs);
  auto deleted = [&] {
    std::vector<std::string> names;
    for (const auto& a : Of("delete", "replicasets")) names.push_back(a.name);
    return names;
  };
  ASSERT_TRUE(Sync().ok());  // 3 old, limit 2: the lowest revision goes
  EXPECT_THAT(deleted(), ElementsAre(r1->metadata.name));

  // The informer has not applied the delete: r1 is still cached, and still not deleted again.
  actions_->Clear();
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(deleted(), IsEmpty());

  // It applies it (the store first, then the handler); with the limit lowered to 1 the next
  // lowest revision goes, and only it.
  ASSERT_TRUE(rs_index_->Delete(r1).ok());
  EXPECT_THAT(Keys(controller_->OnReplicaSetDelete(*r1)), ElementsAre("default/foo"));
  Reset(d_index_,
        {MakeDeployment({.image = "img:9", .revision_history_limit = 1, .status = complete})});
  actions_->Clear();
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(deleted(), ElementsAre(r2->metadata.name));

  // A delete answered 404 (someone else deleted r3 first) is no error, as upstream; the RS is
  // gone all the same and is not deleted again while the cache still holds it.
  Reset(d_index_,
        {MakeDeployment({.image = "img:9", .revision_history_limit = 0, .status = complete})});
  replicasets_->Fail("delete", Error{404, "NotFound", "not found", {}}, 1);
  actions_->Clear();
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(deleted(), ElementsAre(r3->metadata.name));
  actions_->Clear();
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(deleted(), IsEmpty());
}

// --- scaleReplicaSetAndRecordEvent ---------------------------------------------------------------
TEST_F(DeploymentControllerTest, ScaleDownEvent) {
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

// --- writes add no defaults and keep unknown fields ----------------------------------------------
TEST_F(DeploymentControllerTest, WritesNeverAddDefaultsToTheDeployment) {
  DeploymentSpec spec{.max_surge = std::nullopt,
                      .max_unavailable = std::nullopt,
                      .progress_deadline = std::nullopt,
                      .revision_history_limit = std::nullopt};
  auto d = MakeDeployment(spec);
  Add(d);
  ASSERT_TRUE(Sync().ok());
  EXPECT_THAT(Of("update", "deployments"), IsEmpty());
  auto writes = Of("update-status", "deployments");
  ASSERT_FALSE(writes.empty());
  auto orig_spec = *Parse(d->raw_json.str()).Find("spec");
  for (const auto& w : writes) {
    EXPECT_EQ(*Parse(w.body).Find("spec"), orig_spec);
  }
  // Without a progress deadline there is no Progressing condition.
  auto last = LastStatus();
  EXPECT_EQ(Cond(*last, "Progressing"), nullptr);
  // The absent rollingUpdate block reads as 25%/25% (3 → surge 1): max-replicas 4.
  EXPECT_EQ(
      WrittenRS("create")[0]->metadata.annotations.at("deployment.kubernetes.io/max-replicas"),
      "4");
}

// Unknown fields survive every write (decision 1).
TEST_F(DeploymentControllerTest, UnknownFieldsSurviveWrites) {
  auto base = MakeDeployment({.replicas = 5});
  auto rs = MakeRS(*base, {.replicas = 3});
  Add(base);
  auto with_extra = DecodeRS(*api::MutateRawJson(rs->raw_json.str(), [](Value& v) {
    return api::json::SetPath(v, {"spec", "futureField"}, Value::String("keep"));
  }));
  Add(with_extra);
  ASSERT_TRUE(Sync().ok());
  auto updates = Of("update", "replicasets");
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_THAT(updates[0].body, ::testing::HasSubstr("\"futureField\":\"keep\""));
}

}  // namespace
}  // namespace kcm::deployment::testing
