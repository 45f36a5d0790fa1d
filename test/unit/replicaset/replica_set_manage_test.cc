// Unit tests of the ReplicaSet controller's manageReplicas and claimPods (upstream
// replica_set_test.go's ground): slow start, burst, deletion order, creates from the template,
// events, adoption and release, against the fixture of fixtures.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <string>

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
using ::testing::UnorderedElementsAre;

// A ReplicaSet being deleted gets no creates, but its status is still written.
TEST_F(ControllerTest, DeletingReplicaSetIsNotManagedButStatusWritten) {
  auto rs = NewReplicaSet("rs", 3);
  rs->metadata.deletion_timestamp = Now();
  rs->status.replicas = 5;
  AddRS(rs);
  AddOwnedPods("rs", 1);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 0);
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.replicas, 1);
}

// Unsatisfied expectations skip manageReplicas; status still computed.
TEST_F(ControllerTest, UnsatisfiedExpectationsSkipManage) {
  auto rs = NewReplicaSet("rs", 0);
  AddRS(rs);
  AddOwnedPods("rs", 2);
  controller_->expectations().ExpectCreations("ns/rs", 1);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_TRUE(pod_control_->DeletePodNames().empty());
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.replicas, 2);
}

// At most 500 creates in one sync, and at most 500 deletes.
TEST_F(ControllerTest, BurstCapsCreatesAndDeletes) {
  AddRS(NewReplicaSet("up", 600));
  ASSERT_TRUE(Sync("up").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 500);
  EXPECT_EQ(controller_->expectations().GetExpectations("ns/up")->add, 500);

  AddRS(NewReplicaSet("down", 0));
  AddOwnedPods("down", 502);
  ASSERT_TRUE(Sync("down").ok());
  EXPECT_EQ(pod_control_->DeletePodNames().size(), 500u);
}

// Creates go in batches 1, 2, 4, …; the first batch with a failure is the last; creations
// that failed or were skipped are marked observed; the first error is returned.
TEST_F(ControllerTest, SlowStartStopsAfterFailingBatch) {
  AddRS(NewReplicaSet("rs", 10));
  pod_control_->SetCreateLimit(3);  // creates 4+ fail: batches 1 ok, 2 ok, 4 (all fail)
  auto r = Sync("rs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "CreateLimit");
  EXPECT_EQ(pod_control_->CreateCallCount(), 7) << "batches 1+2+4, the next 3 never attempted";
  auto exp = controller_->expectations().GetExpectations("ns/rs");
  ASSERT_TRUE(exp.has_value());
  EXPECT_EQ(exp->add, 3) << "only the 3 successful creates are still expected";
}

// Once the ReplicaSet leaves the cache (deleted mid-scale-up), the remaining slow-start batches
// create nothing and their expectations are dropped.
TEST_F(ControllerTest, DeletedDuringSlowStartStopsCreating) {
  auto rs = NewReplicaSet("rs", 10);
  AddRS(rs);
  pod_control_->SetCreateHook([&]() -> Status {
    EXPECT_TRUE(rs_index_->Delete(rs).ok());
    return OkStatus();
  });
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 1);
  EXPECT_EQ(controller_->expectations().GetExpectations("ns/rs")->add, 1);
}

// Fencing: the worker's stop token (the leader's "leading" token) is requested during a slow
// start: the creates already running finish, no further create and no status write is made, the
// creates never made are no longer expected, and the sync reports "Canceled".
TEST_F(ControllerTest, StopDuringSlowStartStopsCreatesAndStatusWrite) {
  AddRS(NewReplicaSet("rs", 100));
  std::stop_source leading;
  std::atomic<int> calls{0};
  pod_control_->SetCreateHook([&]() -> Status {
    if (++calls == 3) leading.request_stop();  // the last call of batch 2
    return OkStatus();
  });
  auto r = controller_->Reconcile({"ns", "rs"}, leading.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "Canceled");
  EXPECT_EQ(pod_control_->CreateCallCount(), 3) << "batches 1 and 2 only";
  EXPECT_TRUE(rs_client_->StatusWrites().empty()) << "no status write after the stop";
  EXPECT_EQ(controller_->expectations().GetExpectations("ns/rs")->add, 3);
}

// Fencing: once stopped, a sync that would delete surplus pods deletes none.
TEST_F(ControllerTest, StoppedSyncDeletesNothing) {
  AddRS(NewReplicaSet("rs", 1));
  AddOwnedPods("rs", 4);
  std::stop_source leading;
  leading.request_stop();
  auto r = controller_->Reconcile({"ns", "rs"}, leading.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "Canceled");
  EXPECT_TRUE(pod_control_->DeletePodNames().empty());
  EXPECT_TRUE(rs_client_->StatusWrites().empty());
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
}

// A create refused because the namespace is terminating counts as success.
TEST_F(ControllerTest, NamespaceTerminatingCountsAsSuccess) {
  AddRS(NewReplicaSet("rs", 3));
  Error terminating{403, "Forbidden", "namespace ns is being terminated", {"NamespaceTerminating"}};
  pod_control_->SetError(terminating);
  auto r = Sync("rs");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 3);
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_TRUE(rs_client_->StatusWrites()[0].status.conditions.empty());
}

// Surplus pods are deleted; a failed delete is marked observed and returned, a NotFound is
// swallowed.
TEST_F(ControllerTest, DeletesSurplusAndObservesFailedDeletes) {
  AddRS(NewReplicaSet("rs", 1));
  AddOwnedPods("rs", 3);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->DeletePodNames().size(), 2u);
  EXPECT_EQ(controller_->expectations().GetUIDs("ns/rs").size(), 2u);

  // Failing deletes: the expectations are lowered at once, so the next sync may act again.
  Rebuild({});
  pod_control_->Clear();
  pod_control_->SetError(Error{500, "InternalError", "etcd down", {}});
  auto r = Sync("rs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "etcd down");
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));

  Rebuild({});
  pod_control_->Clear();
  pod_control_->SetError(Error{404, "NotFound", "pods \"x\" not found", {}});
  EXPECT_TRUE(Sync("rs").ok());
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
}

// Unscheduled, then not-ready, then lower deletion cost go first.
TEST_F(ControllerTest, DeletionOrderPrefersUnscheduledUnreadyAndLowCost) {
  AddRS(NewReplicaSet("rs", 2));
  AddPod("ready-a", {.owner = "rs", .app = "rs"});
  AddPod("ready-b", {.owner = "rs", .app = "rs"});
  AddPod("cheap", {.owner = "rs", .app = "rs", .cost = -10});
  AddPod("unready", {.owner = "rs", .app = "rs", .ready = false});
  AddPod(
      "unscheduled",
      {.owner = "rs", .app = "rs", .phase = api::PodPhase::kPending, .ready = false, .node = ""});
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_THAT(pod_control_->DeletePodNames(),
              UnorderedElementsAre("unscheduled", "unready", "cheap"));
}

// Pods of sibling ReplicaSets (same controller owner) on the same node raise a pod's rank.
TEST_F(ControllerTest, DeletionRanksByRelatedPodsOnSameNode) {
  auto rs = NewReplicaSet("rs", 1);
  rs->metadata.owner_references = {{"apps/v1", "Deployment", "d", "uid-d", true, true}};
  AddRS(rs);
  auto sibling = NewReplicaSet("old", 0);
  sibling->metadata.owner_references = rs->metadata.owner_references;
  AddRS(sibling);
  AddPod("alone", {.owner = "rs", .app = "rs", .node = "n1"});
  AddPod("crowded", {.owner = "rs", .app = "rs", .node = "n2"});
  AddPod("sibling-pod", {.owner = "old", .app = "old", .node = "n2"});
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_THAT(pod_control_->DeletePodNames(), ElementsAre("crowded"));
}

// Succeeded, Failed and terminating pods do not count; replacements are created.
TEST_F(ControllerTest, InactivePodsAreNotCounted) {
  AddRS(NewReplicaSet("rs", 3));
  AddPod("ok", {.owner = "rs", .app = "rs"});
  AddPod("done", {.owner = "rs", .app = "rs", .phase = api::PodPhase::kSucceeded});
  AddPod("failed", {.owner = "rs", .app = "rs", .phase = api::PodPhase::kFailed});
  AddPod("going", {.owner = "rs", .app = "rs", .deleting = true});
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 2);
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.replicas, 1);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.terminating_replicas, 1);
}

// Pods are created from the RS template with one controller ownerReference.
TEST_F(ControllerTest, CreatesFromTemplateWithControllerRef) {
  auto rs = NewReplicaSet("rs", 1);
  AddRS(rs);
  ASSERT_TRUE(Sync("rs").ok());
  ASSERT_EQ(pod_control_->Templates().size(), 1u);
  EXPECT_EQ(pod_control_->Templates()[0].raw_json, rs->spec.pod_template.raw_json);
  ASSERT_EQ(pod_control_->ControllerRefs().size(), 1u);
  const api::OwnerReference ref = pod_control_->ControllerRefs()[0];
  EXPECT_EQ(ref.api_version, "apps/v1");
  EXPECT_EQ(ref.kind, "ReplicaSet");
  EXPECT_EQ(ref.name, "rs");
  EXPECT_EQ(ref.uid, "uid-rs");
  EXPECT_TRUE(ref.controller);
  EXPECT_TRUE(ref.block_owner_deletion);
}

// A template without labels is refused (no pod sent), reported as the sync's error.
TEST_F(ControllerTest, TemplateWithoutLabelsRefused) {
  auto rs = NewReplicaSet("rs", 1);
  rs->spec.pod_template.labels = {};
  rs->spec.pod_template.raw_json = R"({"spec":{"containers":[]}})";
  AddRS(rs);
  // Through RealPodControl, which builds the body: nothing reaches the server.
  kcm::testing::TestServer server(
      [](const kcm::testing::RecordedRequest&, kcm::testing::Conn& c) { c.Respond(500, "{}"); });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  record::FakeRecorder recorder;
  auto control = std::make_shared<controller::RealPodControl>(
      std::make_shared<client::ResourceClient>(
          *rest, client::GroupVersionResource{"", "v1", "pods"}, true),
      recorder, "apps/v1");
  ReplicaSetController c(
      informers::TypedInformer<api::ReplicaSet>{nullptr, informers::ReplicaSetLister(rs_index_)},
      informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, rs_client_,
      control, {.clock = &clock_});
  auto r = c.Reconcile({"ns", "rs"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(server.requests().empty());
}

// Events on the RS through RealPodControl: SuccessfulCreate "Created pod: X",
// SuccessfulDelete "Deleted pod: X", Warning FailedCreate "Error creating: E".
TEST_F(ControllerTest, EventsForCreatesAndDeletes) {
  std::atomic<int> n{0};
  kcm::testing::TestServer server([&](const kcm::testing::RecordedRequest& req,
                                      kcm::testing::Conn& c) {
    if (req.method == "POST") {
      if (req.path.find("/namespaces/ns/pods") != std::string::npos && n++ == 0) {
        c.Respond(201, R"({"kind":"Pod","metadata":{"name":"rs-abcde","namespace":"ns"}})");
      } else {
        c.Respond(
            403,
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"exceeded quota: q","reason":"Forbidden","code":403})");
      }
      return;
    }
    c.Respond(200, R"({"kind":"Pod","metadata":{"name":"x","namespace":"ns"}})");
  });
  auto rest = client::RestClient::Create({.host = server.url(), .qps = -1});
  ASSERT_TRUE(rest.ok());
  record::FakeRecorder recorder;
  auto control = std::make_shared<controller::RealPodControl>(
      std::make_shared<client::ResourceClient>(
          *rest, client::GroupVersionResource{"", "v1", "pods"}, true),
      recorder, "apps/v1");
  ReplicaSetController c(
      informers::TypedInformer<api::ReplicaSet>{nullptr, informers::ReplicaSetLister(rs_index_)},
      informers::TypedInformer<api::Pod>{nullptr, informers::PodLister(pod_index_)}, rs_client_,
      control, {.clock = &clock_});

  AddRS(NewReplicaSet("rs", 2));
  ASSERT_FALSE(c.Reconcile({"ns", "rs"}, {}).ok());  // batch 1 ok, batch 2 (1 pod) refused
  EXPECT_THAT(recorder.TakeEvents(),
              ElementsAre("Normal SuccessfulCreate Created pod: rs-abcde",
                          "Warning FailedCreate Error creating: exceeded quota: q"));

  AddRS(NewReplicaSet("small", 0));
  AddPod("small-1", {.owner = "small", .app = "small"});
  ASSERT_TRUE(c.Reconcile({"ns", "small"}, {}).ok());
  EXPECT_THAT(recorder.TakeEvents(), ElementsAre("Normal SuccessfulDelete Deleted pod: small-1"));
}

// An orphan that matches is adopted (after one uncached GET of the RS); a pod owned by
// another controller is ignored; an owned pod that no longer matches is released.
TEST_F(ControllerTest, ClaimAdoptsOrphansReleasesNonMatchingIgnoresOthers) {
  AddRS(NewReplicaSet("rs", 3));
  AddPod("orphan-1", {.app = "rs"});
  AddPod("orphan-2", {.app = "rs"});
  AddPod("relabelled", {.owner = "rs", .app = "other"});
  auto foreign = NewPod("foreign", {.app = "rs"}, Now());
  foreign->metadata.owner_references = {{"apps/v1", "ReplicaSet", "x", "uid-x", true, true}};
  ASSERT_TRUE(pod_index_->Add(foreign).ok());
  AddPod("mine", {.owner = "rs", .app = "rs"});

  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(rs_client_->log().Of("get", "replicasets").size(), 1u)
      << "one uncached GET before the first adoption";
  std::vector<std::string> patched;
  for (const auto& p : pod_control_->Patches()) patched.push_back(p.name);
  EXPECT_THAT(patched, UnorderedElementsAre("orphan-1", "orphan-2", "relabelled"));
  for (const auto& p : pod_control_->Patches()) {
    if (p.name == "relabelled") {
      EXPECT_NE(p.body.find("$patch"), std::string::npos) << p.body;
    } else {
      EXPECT_NE(p.body.find("uid-rs"), std::string::npos) << p.body;
    }
  }
  EXPECT_EQ(pod_control_->CreateCallCount(), 0) << "mine + 2 adopted = 3";
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.replicas, 3);
}

// A ReplicaSet being deleted keeps its matching pods, adopts nothing and releases nothing.
TEST_F(ControllerTest, DeletingReplicaSetNeitherAdoptsNorReleases) {
  auto rs = NewReplicaSet("rs", 3);
  rs->metadata.deletion_timestamp = Now();
  AddRS(rs);
  AddPod("orphan", {.app = "rs"});
  AddPod("relabelled", {.owner = "rs", .app = "other"});
  AddPod("mine", {.owner = "rs", .app = "rs"});
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_TRUE(pod_control_->Patches().empty());
  EXPECT_EQ(rs_client_->StatusWrites()[0].status.replicas, 1);
}

// When the uncached GET shows another UID (deleted and recreated), nothing is adopted and
// the sync fails (to retry with the fresh cache).
TEST_F(ControllerTest, CanAdoptFailsOnRecreatedReplicaSet) {
  AddRS(NewReplicaSet("rs", 1));
  auto recreated = NewReplicaSet("rs", 1);
  recreated->metadata.uid = "other";
  rs_client_->Set(recreated);
  AddPod("orphan", {.app = "rs"});
  auto r = Sync("rs");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(pod_control_->Patches().empty());
  EXPECT_EQ(pod_control_->CreateCallCount(), 0);
}

}  // namespace
}  // namespace kcm::replicaset::testing
