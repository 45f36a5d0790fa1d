// Unit tests of the Deployment controller's RollingUpdate (upstream rolling.go):
// reconcileNewReplicaSet, reconcileOldReplicaSets, cleanupUnhealthyReplicas. The fixture
// (test/unit/deployment/fixture.h) wires a recording fake client, listers over indexers filled
// directly, a FakeRecorder and a FakeClock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/util/testing/fake_clock.h"
#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::testing {
namespace {

// --- rolling update arithmetic -------------------------------------------------------------------
TEST_F(DeploymentControllerTest, RollingUpdateTable) {
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
    actions_->Clear();
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
    for (const auto& rs : WrittenRS("update")) {
      auto tmpl = rs->spec.pod_template.ToJson();
      std::string image =
          (*tmpl).Find("spec")->Find("containers")->as_array()[0].Find("image")->as_string();
      got[image] = rs->spec.replicas;
    }
    EXPECT_EQ(got, c.want);
  }
}

// An old RS whose status still counts more available pods than its (reduced) spec must not
// drive the scale-down: nothing is scaled (found by the e2e proportional-scaling test: scaling
// down from stale counts emptied the old RS). As upstream reconcileOldReplicaSets, the sync itself
// does not fail for it.
TEST_F(DeploymentControllerTest, StaleOldStatusStopsTheScaleDown) {
  auto d =
      MakeDeployment({.replicas = 10, .image = "img:2", .max_surge = "0", .max_unavailable = "5"});
  Add(d);
  Add(MakeRS(
      *d, {.image = "img:2", .replicas = 3, .available = 0, .revision = 2, .created_minute = 5}));
  Add(MakeRS(*d, {.image = "img:1", .replicas = 7, .available = 8, .revision = 1}));
  EXPECT_TRUE(Sync().ok());
  EXPECT_THAT(Of("update", "replicasets"), IsEmpty());
}

// Upstream cleanupUnhealthyReplicas/reconcileOldReplicaSets: an old RS whose status still counts
// more available pods than its (just lowered) spec cannot be cleaned up. cleanupUnhealthyReplicas
// fails with the counts in the message, but reconcileOldReplicaSets drops that error: the sync
// scales nothing, writes the rollout status and succeeds (no retry loop until the status catches
// up; the RS controller's status write brings the next sync).
TEST_F(DeploymentControllerTest, StaleOldReplicaSetStatusSkipsScaleDownWithoutFailing) {
  auto d =
      MakeDeployment({.replicas = 7, .image = "img:2", .max_surge = "2", .max_unavailable = "1"});
  Add(d);
  Add(MakeRS(
      *d, {.image = "img:2", .replicas = 4, .available = 4, .revision = 2, .created_minute = 30}));
  auto old_rs = MakeRS(
      *d, {.image = "img:1", .replicas = 5, .status_replicas = 7, .available = 7, .revision = 1});
  Add(old_rs);
  ASSERT_TRUE(Sync().ok());
  for (const auto& rs : WrittenRS("update")) {  // annotations may be synced, sizes not
    EXPECT_EQ(rs->spec.replicas, rs->metadata.name == old_rs->metadata.name ? 5 : 4)
        << rs->metadata.name;
  }
  EXPECT_NE(LastStatus(), nullptr);  // the rollout status is still written

  util::ReplicaSets olds = {old_rs};
  Result<int32_t> cleaned = controller_->CleanupUnhealthyReplicas(olds, *d, 1);
  ASSERT_FALSE(cleaned.ok());
  EXPECT_EQ(cleaned.error().message,
            "when cleaning up unhealthy replicas, got invalid request to scale down default/" +
                old_rs->metadata.name + " 5 -> 7");
}

}  // namespace
}  // namespace kcm::deployment::testing
