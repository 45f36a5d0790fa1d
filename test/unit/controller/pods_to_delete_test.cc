#include "pkg/controller/pods_to_delete.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/api/testing/objects.h"

namespace kcm::controller {
namespace {

using api::testing::kNow;
using api::testing::PodBuilder;
using namespace std::chrono_literals;

std::vector<std::string> Names(const std::vector<PodPtr>& pods) {
  std::vector<std::string> names;
  for (const PodPtr& p : pods) names.push_back(p->metadata.name);
  return names;
}

// R9: the rank of a pod is the number of active related pods on its node (inactive ones and
// other nodes do not count).
TEST(GetPodsToDeleteTest, RanksCountActiveRelatedPodsOnSameNode) {
  PodPtr a = PodBuilder("a").Node("n1").Build();
  PodPtr b = PodBuilder("b").Node("n2").Build();
  std::vector<PodPtr> related = {
      a,
      b,
      PodBuilder("x1").Node("n1").Build(),
      PodBuilder("x2").Node("n1").Build(),
      PodBuilder("dead").Node("n2").Phase(api::PodPhase::kFailed).Build(),
      PodBuilder("gone").Node("n2").Deleting().Build()};
  ActivePodsWithRanks ranked = GetPodsRankedByRelatedPodsOnSameNode({a, b}, related, kNow);
  EXPECT_EQ(ranked.rank, (std::vector<int>{3, 1}));
  EXPECT_EQ(ranked.now, kNow);
}

// R9: scale-down by one picks the pod doubled up on a node over an otherwise better candidate
// order (b comes first in the input and is otherwise identical).
TEST(GetPodsToDeleteTest, PrefersPodsOnCrowdedNodes) {
  PodPtr a = PodBuilder("a").Node("n1").Ready(kNow - 1h).Build();
  PodPtr b = PodBuilder("b").Node("n2").Ready(kNow - 1h).Build();
  std::vector<PodPtr> related = {a, b, PodBuilder("other-rs-pod").Node("n1").Build()};
  EXPECT_EQ(Names(GetPodsToDelete({b, a}, related, 1, kNow)), (std::vector<std::string>{"a"}));
}

// R9: the first `diff` pods by rank order; all pods (unsorted) when diff covers them all.
TEST(GetPodsToDeleteTest, TakesDiffInRankOrder) {
  std::vector<PodPtr> pods = {PodBuilder("ready-old").Ready(kNow - 10h).Build(),
                              PodBuilder("not-ready").NotReady().Build(),
                              PodBuilder("unscheduled").Node("").Build(),
                              PodBuilder("ready-new").Ready(kNow - 1min).Build()};
  EXPECT_EQ(Names(GetPodsToDelete(pods, pods, 3, kNow)),
            (std::vector<std::string>{"unscheduled", "not-ready", "ready-new"}));
  EXPECT_EQ(Names(GetPodsToDelete(pods, pods, 4, kNow)),
            (std::vector<std::string>{"ready-old", "not-ready", "unscheduled", "ready-new"}));
  EXPECT_TRUE(GetPodsToDelete(pods, pods, 0, kNow).empty());
  EXPECT_TRUE(GetPodsToDelete(pods, pods, -2, kNow).empty());
  EXPECT_EQ(GetPodsToDelete(pods, pods, 9, kNow).size(), 4u);
}

// M5: one observation per Ready pod chosen, of its age over the youngest Ready pod's age.
TEST(GetPodsToDeleteTest, ReportsSortingDeletionAgeRatio) {
  const metrics::Histogram& h = SortingDeletionAgeRatioMetric();
  const uint64_t count_before = h.Count();
  const double sum_before = h.Sum();
  // Ready times equal, so creation time decides: newest (youngest, ratio 1) goes first, then the
  // one four times as old (ratio 4). The not-ready pod goes before both and is not reported.
  std::vector<PodPtr> pods = {
      PodBuilder("old").Ready(kNow - 1min).Created(kNow - 40min).Build(),
      PodBuilder("young").Ready(kNow - 1min).Created(kNow - 10min).Build(),
      PodBuilder("oldest").Ready(kNow - 1min).Created(kNow - 160min).Build(),
      PodBuilder("not-ready").NotReady().Created(kNow - 5min).Build()};
  EXPECT_EQ(Names(GetPodsToDelete(pods, pods, 3, kNow)),
            (std::vector<std::string>{"not-ready", "young", "old"}));
  EXPECT_EQ(h.Count() - count_before, 2u);
  EXPECT_DOUBLE_EQ(h.Sum() - sum_before, 1.0 + 4.0);
  // Deleting everything sorts nothing and reports nothing.
  (void)GetPodsToDelete(pods, pods, 4, kNow);
  EXPECT_EQ(h.Count() - count_before, 2u);
}

}  // namespace
}  // namespace kcm::controller
