// Unit tests of the ReplicaSet controller's status write (upstream calculateStatus and
// updateReplicaSetStatus), the ReplicaFailure condition, requeues at the next availability and
// the read-your-own-writes check, against the fixture of fixtures.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <variant>

#include "controllers/replicaset/replica_set_utils.h"
#include "pkg/client/resource_client.h"
#include "pkg/controller/pod_control.h"
#include "pkg/record/testing/fake_recorder.h"
#include "pkg/util/testing/fake_clock.h"
#include "test/unit/client/test_server.h"
#include "test/unit/replicaset/fixtures.h"

namespace kcm::replicaset::testing {
namespace {

using ::testing::ElementsAre;

// Replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (minReadySeconds),
// observedGeneration written in one PUT based on the cached object.
TEST_F(ControllerTest, StatusCountsWritten) {
  auto rs = NewReplicaSet("rs", 4);
  rs->spec.min_ready_seconds = 10;
  std::map<std::string, std::string> template_labels = rs->spec.pod_template.labels.ToMap();
  template_labels["tier"] = "web";
  rs->spec.pod_template.labels = template_labels;
  rs->metadata.generation = 7;
  AddRS(rs);
  AddPod("full-old", {.owner = "rs", .app = "rs"});  // ready 1h ago: available
  auto full = NewPod("full-new", {.owner = "rs", .app = "rs", .ready_since = Now() - 5s}, Now());
  auto labels = full->metadata.labels.ToMap();
  labels["tier"] = "web";
  full->metadata.labels = labels;
  ASSERT_TRUE(pod_index_->Add(full).ok());
  AddPod("unready", {.owner = "rs", .app = "rs", .ready = false});
  AddPod("ready-2", {.owner = "rs", .app = "rs"});
  ASSERT_TRUE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  const auto w = rs_client_->StatusWrites()[0];
  EXPECT_EQ(w.resource_version, "1");
  EXPECT_EQ(w.status.replicas, 4);
  EXPECT_EQ(w.status.fully_labeled_replicas, 1);
  EXPECT_EQ(w.status.ready_replicas, 3);
  EXPECT_EQ(w.status.available_replicas, 2);
  EXPECT_EQ(w.status.observed_generation, 7);
  EXPECT_EQ(w.status.terminating_replicas, 0);
}

// Nothing changed → no write.
TEST_F(ControllerTest, UnchangedStatusNotWritten) {
  auto rs = NewReplicaSet("rs", 2);
  rs->status.replicas = 2;
  rs->status.fully_labeled_replicas = 2;
  rs->status.ready_replicas = 2;
  rs->status.available_replicas = 2;
  rs->status.terminating_replicas = 0;
  AddRS(rs);
  AddOwnedPods("rs", 2);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_TRUE(rs_client_->StatusWrites().empty());
}

// A failed write is retried once after a fresh GET; a second failure is returned.
TEST_F(ControllerTest, StatusWriteRetriedOnceAfterGet) {
  AddRS(NewReplicaSet("rs", 0));
  auto fresh = NewReplicaSet("rs", 0);
  fresh->metadata.resource_version = "9";
  rs_client_->Set(fresh);
  rs_client_->Fail("update-status", Error{409, "Conflict", "the object has been modified", {}}, 1);
  ASSERT_TRUE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 2u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].resource_version, "1");
  EXPECT_EQ(rs_client_->StatusWrites()[1].resource_version, "9");
  EXPECT_EQ(rs_client_->log().Of("get", "replicasets").size(), 1u);

  rs_client_->Fail("update-status", Error{409, "Conflict", "the object has been modified", {}}, 2);
  auto rs2 = NewReplicaSet("rs", 0);
  rs2->metadata.generation = 2;
  ASSERT_TRUE(rs_index_->Update(rs2).ok());
  auto r = Sync("rs");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(errors::IsConflict(r.error()));
  EXPECT_EQ(rs_client_->StatusWrites().size(), 4u);
}

// A failing create adds ReplicaFailure (FailedCreate, the error as message); a successful
// manage removes it.
TEST_F(ControllerTest, ReplicaFailureConditionAddedAndRemoved) {
  AddRS(NewReplicaSet("rs", 1));
  pod_control_->SetError(Error{403, "Forbidden", "exceeded quota: q", {}});
  ASSERT_FALSE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  auto conds = rs_client_->StatusWrites()[0].status.conditions;
  ASSERT_EQ(conds.size(), 1u);
  EXPECT_EQ(conds[0].type, "ReplicaFailure");
  EXPECT_EQ(conds[0].status, "True");
  EXPECT_EQ(conds[0].reason, "FailedCreate");
  EXPECT_EQ(conds[0].message, "exceeded quota: q");
  ASSERT_TRUE(conds[0].last_transition_time.has_value());

  // The informer delivers the written object; the quota is raised.
  auto with_failure = NewReplicaSet("rs", 1);
  with_failure->status = rs_client_->StatusWrites()[0].status;
  ASSERT_TRUE(rs_index_->Update(with_failure).ok());
  pod_control_->SetError(std::nullopt);
  Rebuild({});
  ASSERT_TRUE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 2u);
  EXPECT_TRUE(rs_client_->StatusWrites()[1].status.conditions.empty());
}

// A failing delete gives reason FailedDelete.
TEST_F(ControllerTest, ReplicaFailureOnDeleteHasFailedDeleteReason) {
  AddRS(NewReplicaSet("rs", 0));
  AddOwnedPods("rs", 1);
  pod_control_->SetError(Error{500, "InternalError", "unable to delete pods: boom", {}});
  ASSERT_FALSE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites()[0].status.conditions.size(), 1u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.conditions[0].reason, "FailedDelete");
}

// When the API server drops terminatingReplicas, the controller stops writing it.
TEST_F(ControllerTest, TerminatingReplicasDroppedByServerStopsBeingTracked) {
  rs_client_->DropTerminating();
  AddRS(NewReplicaSet("rs", 0));
  ASSERT_TRUE(Sync("rs").ok());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_TRUE(rs_client_->StatusWrites()[0].status.terminating_replicas.has_value());
  auto stored = rs_client_->Get("ns", "rs");
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(rs_index_->Update(*stored).ok());
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u) << "no write loop over a field the server drops";
}

// Requeue when the next Ready pod reaches minReadySeconds.
TEST_F(ControllerTest, RequeueAtNextAvailability) {
  auto rs = NewReplicaSet("rs", 2);
  rs->spec.min_ready_seconds = 30;
  AddRS(rs);
  AddPod("a", {.owner = "rs", .app = "rs", .ready_since = Now() - 10s});
  AddPod("b", {.owner = "rs", .app = "rs", .ready_since = Now() - 25s});
  auto r = Sync("rs");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(std::holds_alternative<runtime::reconcile::RequeueAfter>(*r));
  EXPECT_GT(std::get<runtime::reconcile::RequeueAfter>(*r).delay, 5s);
  EXPECT_LE(std::get<runtime::reconcile::RequeueAfter>(*r).delay, 5s + 10ms);

  // All available: no requeue.
  clock_.Step(31s);
  r = Sync("rs");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueAfter>(*r));
}

// upstream updatePod: a pod turning Ready enqueues its RS after minReadySeconds (+1 s, as
// upstream).
TEST_F(ControllerTest, PodBecomingReadyEnqueuesAfterMinReadySeconds) {
  auto rs = NewReplicaSet("rs", 1);
  rs->spec.min_ready_seconds = 10;
  AddRS(rs);
  auto old_pod = NewPod("p", {.owner = "rs", .app = "rs", .ready = false}, Now());
  auto cur_pod = NewPod("p", {.owner = "rs", .app = "rs", .resource_version = "2"}, Now());
  const std::vector<runtime::Enqueue> enqueued = controller_->UpdatePod(old_pod, cur_pod);
  EXPECT_THAT(enqueued,
              ElementsAre(runtime::Enqueue({"ns", "rs"}), runtime::Enqueue({"ns", "rs"}, 11s)));
  Enq(enqueued);
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
  clock_.Step(11s);
  // The delayed add lands once the clock passed 11 s.
  auto key = queue_.Get();
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(*key, "ns/rs");
  queue_.Done(*key);
}

// Bad input: a selector that does not parse (or is null) is logged and skipped — no creates, no
// deletes, no patches, no error (retrying cannot fix it).
TEST_F(ControllerTest, MalformedSelectorSkipped) {
  auto rs = NewReplicaSet("rs", 0);
  rs->spec.selector = api::LabelSelector{{}, {{"app", "Bogus", {"x"}}}};
  AddRS(rs);
  AddOwnedPods("rs", 2);
  auto r = Sync("rs");
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(pod_control_->DeletePodNames().empty());
  EXPECT_TRUE(pod_control_->Patches().empty());

  auto null_sel = NewReplicaSet("null", 0);
  null_sel->spec.selector.reset();
  AddRS(null_sel);
  AddOwnedPods("null", 2);
  EXPECT_TRUE(Sync("null").ok());
  EXPECT_TRUE(pod_control_->DeletePodNames().empty());
  EXPECT_TRUE(pod_control_->Patches().empty());
  EXPECT_TRUE(rs_client_->StatusWrites().empty());
}

// Upstream syncReplicaSet with StaleControllerConsistencyReplicaSet (on by default): after a sync
// wrote the ReplicaSet's status (or a pod for it), the next sync waits — requeued rate-limited,
// acting on nothing — until the informer store has applied that write's resourceVersion.
TEST_F(ControllerTest, StaleControllerConsistencyWaitsForOwnWrites) {
  std::string rs_rv = "1";
  std::string pod_rv = "1";
  ReplicaSetControllerOptions options;
  options.consistency_rv_getters = {
      {api::kReplicaSets.GroupResource(), [&](std::string_view) { return rs_rv; }},
      {api::kPods.GroupResource(), [&](std::string_view) { return pod_rv; }}};
  Rebuild(options);
  ASSERT_NE(controller_->consistency_store(), nullptr);
  rs_client_->NumberWritesFrom(100);
  auto rs = NewReplicaSet("rs", 3);
  AddRS(rs);
  AddOwnedPods("rs", 3);

  // First sync: nothing recorded yet; writes status (replicas 0 -> 3) at RV 100.
  auto first = Sync("rs");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*first));
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);

  // The cache still shows the ReplicaSet before that write: wait, touching nothing.
  ASSERT_TRUE(rs_index_->Delete(rs).ok());  // even a vanished RS is not acted on yet
  auto stale = Sync("rs");
  ASSERT_TRUE(stale.ok());
  EXPECT_TRUE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*stale));
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(pod_control_->CreateCallCount(), 0);

  // The informer delivers the written ReplicaSet: the sync goes ahead (and has nothing to write).
  rs_rv = "100";
  Result<ReplicaSetPtr> stored = rs_client_->Get("ns", "rs");
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(rs_index_->Add(*stored).ok());
  auto caught_up = Sync("rs");
  ASSERT_TRUE(caught_up.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*caught_up));
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u);

  // A pod written for the ReplicaSet (create or adoption) holds it the same way; a pod whose
  // controller is not a ReplicaSet is not ours to track.
  controller_->RecordPodWrite("ns", {"apps/v1", "Deployment", "rs", "uid-rs", true, true}, "150");
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*Sync("rs")));
  controller_->RecordPodWrite("ns", {"apps/v1", "ReplicaSet", "rs", "uid-rs", true, true}, "150");
  EXPECT_TRUE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*Sync("rs")));
  pod_rv = "151";
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*Sync("rs")));
}

// With a ready sink (Run sets the controller's queue), a stale sync is not requeued through the
// rate limiter: it says it awaits a wake, and the ReplicaSet goes back to the sink exactly when
// the stores have applied our writes, not before, and once.
TEST_F(ControllerTest, StaleSyncIsWokenWhenTheInformersCatchUp) {
  std::string rs_rv = "1";
  std::string pod_rv = "1";
  ReplicaSetControllerOptions options;
  options.consistency_rv_getters = {
      {api::kReplicaSets.GroupResource(), [&](std::string_view) { return rs_rv; }},
      {api::kPods.GroupResource(), [&](std::string_view) { return pod_rv; }}};
  Rebuild(options);
  controller::ConsistencyStore* store = controller_->consistency_store();
  ASSERT_NE(store, nullptr);
  std::vector<std::string> woken;
  store->SetReadySink([&](const std::string& key) { woken.push_back(key); });
  rs_client_->NumberWritesFrom(100);
  AddRS(NewReplicaSet("rs", 3));
  AddOwnedPods("rs", 3);
  ASSERT_TRUE(Sync("rs").ok());  // status written at RV 100
  controller_->RecordPodWrite("ns", {"apps/v1", "ReplicaSet", "rs", "uid-rs", true, true}, "150");

  auto stale = Sync("rs");
  ASSERT_TRUE(stale.ok());
  EXPECT_TRUE(std::holds_alternative<runtime::reconcile::AwaitWake>(*stale));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*stale));
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(store->Waiting(), 1u);

  // One store caught up, the other not yet: still waiting.
  rs_rv = "100";
  store->StoresAdvanced();
  EXPECT_TRUE(woken.empty());
  pod_rv = "149";
  store->StoresAdvanced();
  EXPECT_TRUE(woken.empty());
  // Both there: woken at once, and only once.
  pod_rv = "150";
  store->StoresAdvanced();
  store->StoresAdvanced();
  EXPECT_EQ(woken, std::vector<std::string>{"ns/rs"});
  EXPECT_EQ(store->Waiting(), 0u);
  auto after = Sync("rs");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::AwaitWake>(*after));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*after));
}

TEST_F(ControllerTest, StaleControllerConsistencyOffByGate) {
  ReplicaSetControllerOptions options;
  options.stale_controller_consistency = false;
  options.consistency_rv_getters = {
      {api::kReplicaSets.GroupResource(), [](std::string_view) { return std::string(); }}};
  Rebuild(options);
  EXPECT_EQ(controller_->consistency_store(), nullptr);
  rs_client_->NumberWritesFrom(100);
  AddRS(NewReplicaSet("rs", 1));
  AddOwnedPods("rs", 1);
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*Sync("rs")));
  EXPECT_FALSE(std::holds_alternative<runtime::reconcile::RequeueRateLimited>(*Sync("rs")));
}

}  // namespace
}  // namespace kcm::replicaset::testing
