// Unit tests of controllers/deployment/util (D3, D5, D6, D7, D9, D13, D14).
#include "controllers/deployment/util/deployment_util.h"

#include <gtest/gtest.h>

#include "test/unit/deployment/fixture.h"

namespace kcm::deployment::util {
namespace {

using testing::DeploymentSpec;
using testing::MakeDeployment;
using testing::MakeRS;
using testing::RSSpec;

// D6: rounding of percentages and the both-zero rule.
TEST(ResolveFencepostsTest, D6_Table) {
  struct Case {
    std::optional<api::IntOrString> surge, unavailable;
    int32_t desired;
    int32_t want_surge, want_unavailable;
  };
  auto s = [](const char* v) { return api::IntOrString::FromString(v); };
  auto i = [](int v) { return api::IntOrString::FromInt(v); };
  const Case cases[] = {
      {std::nullopt, std::nullopt, 10, 3, 2},  // defaults 25%/25%: 2.5 → 3 up, 2 down
      {s("25%"), s("25%"), 4, 1, 1},
      {s("25%"), s("25%"), 1, 1, 0},  // 0.25 → 1 up, 0 down
      {s("10%"), s("10%"), 5, 1, 0},
      {i(0), i(0), 5, 0, 1},         // both zero → maxUnavailable 1
      {s("0%"), s("0%"), 10, 0, 1},  // both zero after scaling
      {s("1%"), s("0%"), 10, 1, 0},  // 0.1 rounds up to 1 surge: no forced unavailable
      {i(2), s("50%"), 3, 2, 1},
      {s("100%"), i(0), 3, 3, 0},
  };
  for (const auto& c : cases) {
    auto f = ResolveFenceposts(c.surge, c.unavailable, c.desired);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->max_surge, c.want_surge) << "desired " << c.desired;
    EXPECT_EQ(f->max_unavailable, c.want_unavailable) << "desired " << c.desired;
  }
  EXPECT_FALSE(ResolveFenceposts(s("abc"), std::nullopt, 3).ok());
}

// D6: MaxUnavailable is capped at replicas and is 0 for Recreate.
TEST(ResolveFencepostsTest, D6_MaxUnavailableCapAndRecreate) {
  DeploymentSpec spec;
  spec.replicas = 2;
  spec.max_unavailable = "5";
  EXPECT_EQ(MaxUnavailable(*MakeDeployment(spec)), 2);
  spec.strategy = "Recreate";
  EXPECT_EQ(MaxUnavailable(*MakeDeployment(spec)), 0);
  EXPECT_EQ(MaxSurge(*MakeDeployment(spec)), 0);
}

// D7: new RS size = current + min(replicas + maxSurge − Σspec, replicas − current).
TEST(NewRSNewReplicasTest, D7_Table) {
  struct Case {
    int32_t replicas;
    std::string surge;
    int32_t new_spec, old_spec;
    int32_t want;
  };
  const Case cases[] = {
      {10, "3", 0, 10, 3},                           // surge of 3 over 10 old
      {10, "3", 3, 10, 3},                           // at replicas + surge: no growth
      {10, "3", 3, 7, 6},                            // old scaled down by 3 → 3 more
      {10, "3", 8, 0, 10},                           // capped at replicas
      {10, "0", 0, 10, 0},                           // no surge: wait for old to shrink
      {10, "0", 0, 8, 2},  {1, "\"25%\"", 0, 1, 1},  // 25% of 1 rounds up to 1
  };
  for (const auto& c : cases) {
    DeploymentSpec spec;
    spec.replicas = c.replicas;
    spec.max_surge = c.surge;
    spec.max_unavailable = "1";
    auto d = MakeDeployment(spec);
    auto new_rs = MakeRS(*d, {.image = "img:2", .replicas = c.new_spec});
    auto old_rs = MakeRS(*d, {.image = "img:1", .replicas = c.old_spec});
    auto got = NewRSNewReplicas(*d, {old_rs, new_rs}, *new_rs);
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, c.want) << "replicas " << c.replicas << " surge " << c.surge << " new "
                            << c.new_spec << " old " << c.old_spec;
  }
  DeploymentSpec recreate;
  recreate.strategy = "Recreate";
  recreate.replicas = 4;
  auto d = MakeDeployment(recreate);
  auto rs = MakeRS(*d, {.replicas = 0});
  EXPECT_EQ(*NewRSNewReplicas(*d, {rs}, *rs), 4);
}

// D3: the new RS is found by semantic template equality ignoring pod-template-hash; the oldest
// of several equal ones wins.
TEST(FindNewReplicaSetTest, D3_SemanticEqualityIgnoringHash) {
  auto d = MakeDeployment();
  auto older = MakeRS(*d, {.name = "foo-a", .image = "img:1", .created_minute = 1});
  auto newer = MakeRS(*d, {.name = "foo-b", .image = "img:1", .created_minute = 2});
  auto other = MakeRS(*d, {.name = "foo-c", .image = "img:2", .created_minute = 0});
  auto found = FindNewReplicaSet(*d, {newer, other, older});
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->metadata.name, "foo-a");
  EXPECT_EQ(FindNewReplicaSet(*d, {other}), nullptr);

  // Same template spelled differently (member order, explicit empty fields): still equal.
  api::ReplicaSet respelled = *other;
  respelled.spec.pod_template.raw_json =
      R"({"spec":{"containers":[{"image":"img:1","name":"c"}],"volumes":[]},)"
      R"("metadata":{"labels":{"pod-template-hash":"zzz","app":"foo"},"annotations":{}}})";
  auto found2 = FindNewReplicaSet(*d, {std::make_shared<const api::ReplicaSet>(respelled)});
  ASSERT_NE(found2, nullptr);
  EXPECT_EQ(found2->metadata.name, "foo-c");
}

// D5: revision raised to max(old)+1, reused RS's old revision kept in revision-history,
// annotations copied except the skipped ones, desired/max on creation only.
TEST(SetNewReplicaSetAnnotationsTest, D5_RevisionsAndCopies) {
  DeploymentSpec spec;
  spec.replicas = 4;
  spec.annotations = {{"kubernetes.io/change-cause", "v2"},
                      {"kubectl.kubernetes.io/last-applied-configuration", "{}"},
                      {"deployment.kubernetes.io/revision", "7"},
                      {"deprecated.deployment.rollback.to", "1"}};
  auto d = MakeDeployment(spec);

  std::map<std::string, std::string> created;
  EXPECT_TRUE(SetNewReplicaSetAnnotations(*d, created, "3", false));
  EXPECT_EQ(created,
            (std::map<std::string, std::string>{{"kubernetes.io/change-cause", "v2"},
                                                {"deployment.kubernetes.io/revision", "3"},
                                                {"deployment.kubernetes.io/desired-replicas", "4"},
                                                {"deployment.kubernetes.io/max-replicas", "5"}}));

  // Reused RS (rollback to it): old revision 1 goes to history, appended.
  std::map<std::string, std::string> reused = {{"deployment.kubernetes.io/revision", "2"},
                                               {"deployment.kubernetes.io/revision-history", "1"}};
  EXPECT_TRUE(SetNewReplicaSetAnnotations(*d, reused, "5", true));
  EXPECT_EQ(reused["deployment.kubernetes.io/revision"], "5");
  EXPECT_EQ(reused["deployment.kubernetes.io/revision-history"], "1,2");
  EXPECT_EQ(reused.count("deployment.kubernetes.io/desired-replicas"), 0u);

  // A newer revision on the RS is never lowered.
  std::map<std::string, std::string> newer = {{"deployment.kubernetes.io/revision", "9"},
                                              {"kubernetes.io/change-cause", "v2"}};
  EXPECT_FALSE(SetNewReplicaSetAnnotations(*d, newer, "5", true));
  EXPECT_EQ(newer["deployment.kubernetes.io/revision"], "9");
}

// D5, D12: max and previous revision.
TEST(RevisionTest, D5_MaxAndLastRevision) {
  auto d = MakeDeployment();
  auto r1 = MakeRS(*d, {.name = "a", .revision = 1});
  auto r3 = MakeRS(*d, {.name = "b", .revision = 3});
  auto r2 = MakeRS(*d, {.name = "c", .revision = 2});
  auto none = MakeRS(*d, {.name = "d", .revision = 0});
  EXPECT_EQ(MaxRevision({r1, r3, r2, none}), 3);
  EXPECT_EQ(LastRevision({r1, r3, r2, none}), 2);
  EXPECT_EQ(LastRevision({r1}), 0);
}

// D9: an RS's proportion of the replicas to add, from its size over the max-replicas annotation.
TEST(GetProportionTest, D9_Table) {
  struct Case {
    int32_t replicas;  // new deployment size (maxSurge 0)
    int32_t rs_size;
    std::string max_annotation;  // "" = absent (status.replicas is used)
    int32_t status_replicas;
    int32_t to_add, added;
    int32_t want;
  };
  const Case cases[] = {
      {20, 5, "10", 10, 10, 0, 5},   // doubles: 5 → 10
      {20, 5, "10", 10, 10, 8, 2},   // capped at what is left to add
      {5, 6, "10", 10, -5, 0, -3},   // halves: 6 → 3
      {5, 6, "10", 10, -5, -4, -1},  // capped at what is left to remove
      {20, 5, "", 10, 10, 0, 5},     // no annotation: status.replicas is the old size
      {20, 0, "10", 10, 10, 0, 0},   // empty RSs get nothing
      {20, 5, "10", 10, 0, 0, 0},    // nothing to add
      {0, 4, "10", 10, -4, 0, -4},   // scale to zero removes everything
      {15, 3, "10", 10, 5, 0, 2},    // 3*15/10 = 4.5 rounds to 5 → +2
  };
  for (const auto& c : cases) {
    DeploymentSpec spec;
    spec.replicas = c.replicas;
    spec.max_surge = "0";
    spec.max_unavailable = "1";
    spec.status = R"({"replicas":)" + std::to_string(c.status_replicas) + "}";
    auto d = MakeDeployment(spec);
    RSSpec rs_spec{.replicas = c.rs_size};
    if (!c.max_annotation.empty()) {
      rs_spec.annotations["deployment.kubernetes.io/max-replicas"] = c.max_annotation;
    }
    auto rs = MakeRS(*d, rs_spec);
    EXPECT_EQ(GetProportion(rs.get(), *d, c.to_add, c.added), c.want)
        << "replicas " << c.replicas << " rs " << c.rs_size << " add " << c.to_add;
  }
}

// D14: same status and reason → no change; same status, new reason → lastTransitionTime kept.
TEST(ConditionsTest, D14_SetKeepsTransitionTime) {
  api::DeploymentStatus status;
  const api::Time t0 = api::Time{} + std::chrono::seconds(1000);
  const api::Time t1 = t0 + std::chrono::seconds(60);
  SetDeploymentCondition(
      status, NewDeploymentCondition("Progressing", "True", "NewReplicaSetCreated", "a", t0));
  SetDeploymentCondition(
      status, NewDeploymentCondition("Progressing", "True", "NewReplicaSetCreated", "b", t1));
  ASSERT_EQ(status.conditions.size(), 1u);
  EXPECT_EQ(status.conditions[0].message, "a");  // unchanged
  SetDeploymentCondition(
      status, NewDeploymentCondition("Progressing", "True", "ReplicaSetUpdated", "c", t1));
  EXPECT_EQ(status.conditions[0].reason, "ReplicaSetUpdated");
  EXPECT_EQ(status.conditions[0].last_transition_time, t0);
  EXPECT_EQ(status.conditions[0].last_update_time, t1);
  SetDeploymentCondition(
      status, NewDeploymentCondition("Progressing", "False", "ProgressDeadlineExceeded", "d", t1));
  EXPECT_EQ(status.conditions[0].last_transition_time, t1);
}

// D13: timed out once lastUpdateTime + deadline has passed; never after NewReplicaSetAvailable.
TEST(ProgressTest, D13_DeploymentTimedOut) {
  DeploymentSpec spec;
  spec.progress_deadline = 60;
  auto d = MakeDeployment(spec);
  const api::Time t0 = api::Time{} + std::chrono::seconds(1000000);
  api::DeploymentStatus s;
  s.conditions.push_back(
      NewDeploymentCondition("Progressing", "True", "ReplicaSetUpdated", "", t0));
  EXPECT_FALSE(DeploymentTimedOut(*d, s, t0 + std::chrono::seconds(60)));
  EXPECT_TRUE(DeploymentTimedOut(*d, s, t0 + std::chrono::seconds(61)));
  s.conditions[0].reason = "NewReplicaSetAvailable";
  EXPECT_FALSE(DeploymentTimedOut(*d, s, t0 + std::chrono::seconds(600)));
}

// Upstream deploymentutil.GetTerminatingReplicaCountForReplicaSets: the sum over the ReplicaSets;
// one never synced (observedGeneration 0) without the field adds nothing, but one synced by the
// ReplicaSet controller that does not report it makes the sum unknown (nil). No ReplicaSets: 0.
TEST(CountingTest, D15_TerminatingReplicaCountAsUpstream) {
  auto rs = [](int64_t observed_generation, std::optional<int32_t> terminating) {
    auto r = std::make_shared<api::ReplicaSet>();
    r->status.observed_generation = observed_generation;
    r->status.terminating_replicas = terminating;
    return ReplicaSetPtr(r);
  };
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({}), 0);
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({nullptr}), 0);
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({rs(1, 2), rs(3, 1)}), 3);
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({rs(1, 2), rs(0, std::nullopt)}), 2);
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({rs(0, std::nullopt)}), 0);
  EXPECT_EQ(GetTerminatingReplicaCountForReplicaSets({rs(1, 2), rs(1, std::nullopt)}),
            std::nullopt);
}

}  // namespace
}  // namespace kcm::deployment::util
