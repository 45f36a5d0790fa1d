// Unit tests of the ReplicaSet controller (upstream replica_set_test.go's ground): handlers,
// syncReplicaSet, manageReplicas and the status write, against listers over indexers the test
// fills, FakePodControl, a fake ReplicaSetClient and a FakeClock.
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

// A failed sync is an error (the runtime requeues it rate-limited); no retry cap is set, so
// the key comes back after any number of failures.
TEST_F(ControllerTest, FailedSyncReturnsErrorForRateLimitedRequeue) {
  AddRS(NewReplicaSet("rs", 1));
  pod_control_->SetError(Error{500, "InternalError", "boom", {}});
  for (int i = 0; i < 20; ++i) {
    // Expectations would hold the next manageReplicas back; a resync after they are lowered.
    auto r = Sync("rs");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "boom");
  }
  EXPECT_EQ(pod_control_->CreateCallCount(), 20);
}

// After asking for 3 pods the ReplicaSet waits until the 3 creations are observed.
TEST_F(ControllerTest, ExpectationsHoldManageUntilCreationsObserved) {
  AddRS(NewReplicaSet("rs", 3));
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 3);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 3) << "no new creates while expectations pending";
  for (int i = 0; i < 2; ++i) {
    Enq(controller_->AddPod(NewPod("p" + std::to_string(i), {.owner = "rs", .app = "rs"}, Now())));
  }
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 3) << "one creation still unobserved";
  Enq(controller_->AddPod(NewPod("p2", {.owner = "rs", .app = "rs"}, Now())));
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 6) << "satisfied, and the cache still shows 0 pods";
}

// Expectations expire after 5 minutes so a missed watch event cannot wedge the ReplicaSet.
TEST_F(ControllerTest, ExpectationsExpireAfterFiveMinutes) {
  AddRS(NewReplicaSet("rs", 2));
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 2);
  clock_.Step(5min + 1s);
  ASSERT_TRUE(Sync("rs").ok());
  EXPECT_EQ(pod_control_->CreateCallCount(), 4);
}

// An added pod with a controllerRef counts as an observed creation and enqueues its owner.
TEST_F(ControllerTest, AddPodObservesCreationAndEnqueuesOwner) {
  AddRS(NewReplicaSet("rs", 1));
  controller_->expectations().ExpectCreations("ns/rs", 1);
  Enq(controller_->AddPod(NewPod("p", {.owner = "rs", .app = "rs"}, Now())));
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
}

// A controllerRef naming a ReplicaSet with another UID (recreated) resolves to nothing.
TEST_F(ControllerTest, AddPodOfRecreatedOwnerIsIgnored) {
  auto rs = NewReplicaSet("rs", 1);
  rs->metadata.uid = "new-uid";
  AddRS(rs);
  controller_->expectations().ExpectCreations("ns/rs", 1);
  Enq(controller_->AddPod(NewPod("p", {.owner = "rs", .app = "rs"}, Now())));
  EXPECT_FALSE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  EXPECT_TRUE(QueueKeys().empty());
}

// A pod added already terminating counts as a deletion.
TEST_F(ControllerTest, AddTerminatingPodCountsAsDeletion) {
  AddRS(NewReplicaSet("rs", 0));
  controller_->expectations().ExpectDeletions("ns/rs", {"ns/p"});
  Enq(controller_->AddPod(NewPod("p", {.owner = "rs", .app = "rs", .deleting = true}, Now())));
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
}

// An update that sets deletionTimestamp counts the deletion at once; the final delete
// (or its tombstone) does not count twice.
TEST_F(ControllerTest, UpdateSettingDeletionTimestampObservesDeletionOnce) {
  AddRS(NewReplicaSet("rs", 0));
  controller_->expectations().ExpectDeletions("ns/rs", {"ns/p", "ns/q"});
  auto old_pod = NewPod("p", {.owner = "rs", .app = "rs"}, Now());
  auto cur_pod =
      NewPod("p", {.owner = "rs", .app = "rs", .deleting = true, .resource_version = "2"}, Now());
  Enq(controller_->UpdatePod(old_pod, cur_pod));
  EXPECT_EQ(controller_->expectations().GetExpectations("ns/rs")->del, 1);
  Enq(controller_->DeletePod(cur_pod));
  EXPECT_EQ(controller_->expectations().GetExpectations("ns/rs")->del, 1);
  Enq(controller_->DeletePod(NewPod("q", {.owner = "rs", .app = "rs"}, Now())));
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
}

// Updates with an unchanged resourceVersion (resyncs) are ignored.
TEST_F(ControllerTest, UpdateWithSameResourceVersionIgnored) {
  AddRS(NewReplicaSet("rs", 1));
  auto pod = NewPod("p", {.owner = "rs", .app = "rs"}, Now());
  Enq(controller_->UpdatePod(pod, pod));
  EXPECT_TRUE(QueueKeys().empty());
}

// An orphan pod (added, or its labels changed) enqueues every ReplicaSet whose selector
// matches it, and no other.
TEST_F(ControllerTest, OrphanPodEnqueuesEveryMatchingReplicaSet) {
  AddRS(NewReplicaSet("a", 1));
  auto b = NewReplicaSet("b", 1);
  b->spec.selector = api::LabelSelector{{{"app", "a"}}, {}};  // overlaps a
  AddRS(b);
  AddRS(NewReplicaSet("c", 1));
  Enq(controller_->AddPod(NewPod("p", {.app = "a"}, Now())));
  EXPECT_THAT(QueueKeys(), UnorderedElementsAre("ns/a", "ns/b"));

  auto old_pod = NewPod("q", {.app = "x"}, Now());
  auto cur_pod = NewPod("q", {.app = "c", .resource_version = "2"}, Now());
  Enq(controller_->UpdatePod(old_pod, cur_pod));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/c"));
}

// A controllerRef change enqueues both the old and the new owner.
TEST_F(ControllerTest, ControllerRefChangeEnqueuesOldAndNewOwner) {
  AddRS(NewReplicaSet("a", 1));
  AddRS(NewReplicaSet("b", 1));
  auto old_pod = NewPod("p", {.owner = "a", .app = "a"}, Now());
  auto cur_pod = NewPod("p", {.owner = "b", .app = "a", .resource_version = "2"}, Now());
  Enq(controller_->UpdatePod(old_pod, cur_pod));
  EXPECT_THAT(QueueKeys(), UnorderedElementsAre("ns/a", "ns/b"));
}

// Pod deletion (including from a tombstone, which the runtime unwraps) → DeletionObserved.
TEST_F(ControllerTest, DeletePodObservesDeletion) {
  AddRS(NewReplicaSet("rs", 0));
  controller_->expectations().ExpectDeletions("ns/rs", {"ns/p"});
  Enq(controller_->DeletePod(NewPod("p", {.owner = "rs", .app = "rs"}, Now())));
  EXPECT_TRUE(controller_->expectations().SatisfiedExpectations("ns/rs"));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
}

// An RS update always enqueues (even unchanged: resync); delete drops its expectations.
TEST_F(ControllerTest, ReplicaSetUpdateAlwaysEnqueuesAndDeleteDropsExpectations) {
  auto rs = NewReplicaSet("rs", 1);
  AddRS(rs);
  Enq(controller_->UpdateReplicaSet(rs, rs));
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
  controller_->expectations().ExpectCreations("ns/rs", 3);
  Enq(controller_->DeleteReplicaSet(rs));
  EXPECT_FALSE(controller_->expectations().GetExpectations("ns/rs").has_value());
  EXPECT_THAT(QueueKeys(), ElementsAre("ns/rs"));
}

// NotFound on sync deletes the expectations and is not an error.
TEST_F(ControllerTest, SyncOfMissingReplicaSetDeletesExpectations) {
  controller_->expectations().ExpectCreations("ns/gone", 3);
  auto r = Sync("gone");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(controller_->expectations().GetExpectations("ns/gone").has_value());
  EXPECT_EQ(pod_control_->CreateCallCount(), 0);
}

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
  EXPECT_GT(r->requeue_after, 5s);
  EXPECT_LE(r->requeue_after, 5s + 10ms);

  // All available: no requeue.
  clock_.Step(31s);
  r = Sync("rs");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->requeue_after, 0s);
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
  options.consistency_rv_getters = {{kReplicaSetsGroupResource, [&] { return rs_rv; }},
                                    {kPodsGroupResource, [&] { return pod_rv; }}};
  Rebuild(options);
  ASSERT_NE(controller_->consistency_store(), nullptr);
  rs_client_->NumberWritesFrom(100);
  auto rs = NewReplicaSet("rs", 3);
  AddRS(rs);
  AddOwnedPods("rs", 3);

  // First sync: nothing recorded yet; writes status (replicas 0 -> 3) at RV 100.
  auto first = Sync("rs");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->requeue);
  ASSERT_EQ(rs_client_->StatusWrites().size(), 1u);

  // The cache still shows the ReplicaSet before that write: wait, touching nothing.
  ASSERT_TRUE(rs_index_->Delete(rs).ok());  // even a vanished RS is not acted on yet
  auto stale = Sync("rs");
  ASSERT_TRUE(stale.ok());
  EXPECT_TRUE(stale->requeue);
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u);
  EXPECT_EQ(pod_control_->CreateCallCount(), 0);

  // The informer delivers the written ReplicaSet: the sync goes ahead (and has nothing to write).
  rs_rv = "100";
  Result<ReplicaSetPtr> stored = rs_client_->Get("ns", "rs");
  ASSERT_TRUE(stored.ok());
  ASSERT_TRUE(rs_index_->Add(*stored).ok());
  auto caught_up = Sync("rs");
  ASSERT_TRUE(caught_up.ok());
  EXPECT_FALSE(caught_up->requeue);
  EXPECT_EQ(rs_client_->StatusWrites().size(), 1u);

  // A pod written for the ReplicaSet (create or adoption) holds it the same way; a pod whose
  // controller is not a ReplicaSet is not ours to track.
  controller_->RecordPodWrite("ns", {"apps/v1", "Deployment", "rs", "uid-rs", true, true}, "150");
  EXPECT_FALSE(Sync("rs")->requeue);
  controller_->RecordPodWrite("ns", {"apps/v1", "ReplicaSet", "rs", "uid-rs", true, true}, "150");
  EXPECT_TRUE(Sync("rs")->requeue);
  pod_rv = "151";
  EXPECT_FALSE(Sync("rs")->requeue);
}

// With a ready sink (Run sets the controller's queue), a stale sync is not requeued through the
// rate limiter: it says it awaits a wake, and the ReplicaSet goes back to the sink exactly when
// the stores have applied our writes, not before, and once.
TEST_F(ControllerTest, StaleSyncIsWokenWhenTheInformersCatchUp) {
  std::string rs_rv = "1";
  std::string pod_rv = "1";
  ReplicaSetControllerOptions options;
  options.consistency_rv_getters = {{kReplicaSetsGroupResource, [&] { return rs_rv; }},
                                    {kPodsGroupResource, [&] { return pod_rv; }}};
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
  EXPECT_TRUE(stale->awaiting_wake);
  EXPECT_FALSE(stale->requeue);
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
  EXPECT_FALSE(after->awaiting_wake);
  EXPECT_FALSE(after->requeue);
}

TEST_F(ControllerTest, StaleControllerConsistencyOffByGate) {
  ReplicaSetControllerOptions options;
  options.stale_controller_consistency = false;
  options.consistency_rv_getters = {{kReplicaSetsGroupResource, [] { return std::string(); }}};
  Rebuild(options);
  EXPECT_EQ(controller_->consistency_store(), nullptr);
  rs_client_->NumberWritesFrom(100);
  AddRS(NewReplicaSet("rs", 1));
  AddOwnedPods("rs", 1);
  EXPECT_FALSE(Sync("rs")->requeue);
  EXPECT_FALSE(Sync("rs")->requeue);
}

}  // namespace
}  // namespace kcm::replicaset::testing
