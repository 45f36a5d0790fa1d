// Unit tests of the ReplicaSet controller (upstream replica_set_test.go's ground): the event
// handlers and the expectations around syncReplicaSet, against listers over indexers the test
// fills, FakePodControl, a fake ReplicaSetClient and a FakeClock. manageReplicas is in
// replica_set_manage_test.cc, the status write in replica_set_status_test.cc.
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

}  // namespace
}  // namespace kcm::replicaset::testing
