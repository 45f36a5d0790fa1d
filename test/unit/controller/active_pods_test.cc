#include "pkg/controller/active_pods.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pkg/api/testing/objects.h"

namespace kcm::controller {
namespace {

using api::PodPhase;
using api::testing::kNow;
using api::testing::PodBuilder;
using namespace std::chrono_literals;

// R10: active = not Succeeded, not Failed, not being deleted.
TEST(ActivePodsTest, IsPodActive) {
  EXPECT_TRUE(IsPodActive(PodBuilder("p").Phase(PodPhase::kRunning).pod));
  EXPECT_TRUE(IsPodActive(PodBuilder("p").Phase(PodPhase::kPending).pod));
  EXPECT_TRUE(IsPodActive(PodBuilder("p").Phase(PodPhase::kUnknown).pod));
  EXPECT_FALSE(IsPodActive(PodBuilder("p").Phase(PodPhase::kSucceeded).pod));
  EXPECT_FALSE(IsPodActive(PodBuilder("p").Phase(PodPhase::kFailed).pod));
  EXPECT_FALSE(IsPodActive(PodBuilder("p").Phase(PodPhase::kRunning).Deleting().pod));
}

// R10: FilterActivePods keeps the active pods in their order.
TEST(ActivePodsTest, FilterActivePodsKeepsOrder) {
  std::vector<PodPtr> pods = {
      PodBuilder("a").Build(), PodBuilder("b").Phase(PodPhase::kFailed).Build(),
      PodBuilder("c").Phase(PodPhase::kPending).Build(), PodBuilder("d").Deleting().Build(),
      PodBuilder("e").Phase(PodPhase::kSucceeded).Build()};
  std::vector<std::string> names;
  for (const PodPtr& p : FilterActivePods(pods)) names.push_back(p->metadata.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c"}));
}

// R14: available = Ready for more than minReadySeconds (strictly), or Ready with 0.
TEST(ActivePodsTest, IsPodAvailable) {
  EXPECT_FALSE(IsPodAvailable(PodBuilder("p").NotReady().pod, 0, kNow));
  EXPECT_TRUE(IsPodReady(PodBuilder("p").Ready(kNow).pod));
  EXPECT_TRUE(IsPodAvailable(PodBuilder("p").Ready(kNow).pod, 0, kNow));
  EXPECT_FALSE(IsPodAvailable(PodBuilder("p").Ready(kNow - 10s).pod, 10, kNow));
  EXPECT_TRUE(IsPodAvailable(PodBuilder("p").Ready(kNow - 10s - 1ms).pod, 10, kNow));
  EXPECT_FALSE(IsPodAvailable(PodBuilder("p").Ready(std::nullopt).pod, 10, kNow));
}

// One row per rule of R9, in order of precedence: `first` must go before `second` although
// every later rule would pick `second` first, and every earlier rule ties.
struct RankCase {
  const char* name;
  PodBuilder first;
  PodBuilder second;
  int first_rank = 0;
  int second_rank = 0;
};

std::vector<RankCase> RankCases() {
  // The base pod: scheduled, Running, Ready an hour ago, created two hours ago, no restarts.
  auto base = [](const char* name) { return PodBuilder(name).Ready(kNow - 1h).Created(kNow - 2h); };
  std::vector<RankCase> cases;
  // 1. unscheduled before scheduled (the unscheduled pod loses on phase/readiness/cost).
  cases.push_back({"unscheduled<scheduled", base("a").Node("").Phase(PodPhase::kRunning).Cost(9),
                   base("b").Phase(PodPhase::kPending).NotReady()});
  // 2. Pending < Unknown < Running (the earlier phase loses on readiness and cost).
  cases.push_back({"pending<running", base("a").Phase(PodPhase::kPending).Cost(9),
                   base("b").Phase(PodPhase::kRunning).NotReady()});
  cases.push_back({"pending<unknown", base("a").Phase(PodPhase::kPending).Cost(9),
                   base("b").Phase(PodPhase::kUnknown).NotReady()});
  cases.push_back({"unknown<running", base("a").Phase(PodPhase::kUnknown).Cost(9),
                   base("b").Phase(PodPhase::kRunning).NotReady()});
  // An unset phase ranks with Pending (upstream's map default).
  cases.push_back({"unset<unknown", base("a").Phase(PodPhase::kUnset).Cost(9),
                   base("b").Phase(PodPhase::kUnknown)});
  // 3. not ready before ready (loses on cost).
  cases.push_back({"notready<ready", base("a").NotReady().Cost(9), base("b").Cost(-9)});
  // 4. lower deletion cost first (loses on rank); absent reads as 0.
  cases.push_back({"lowcost<highcost", base("a").Cost(-1), base("b").Cost(5), 0, 3});
  cases.push_back({"nocost<cost1", base("a"), base("b").Cost(1), 0, 3});
  // 5. more related pods on the node first (loses on ready time).
  {
    RankCase c{"rank2<rank1", base("a").Ready(kNow - 10h), base("b").Ready(kNow - 1min), 2, 1};
    cases.push_back(c);
  }
  // 6. both ready: ready more recently first (loses on restarts and creation).
  cases.push_back({"readyrecent<readylong", base("a").Ready(kNow - 1min).Created(kNow - 10h),
                   base("b").Ready(kNow - 1h).Restarts(7).Created(kNow - 2h)});
  // 6, same log2 bucket: the UID decides and the comparison ends there (restarts ignored).
  cases.push_back({"readysamebucket-uid", base("a").Uid("uid-1").Ready(kNow - 100s),
                   base("b").Uid("uid-2").Ready(kNow - 110s).Restarts(7)});
  // 7. higher max restart count first (loses on creation).
  cases.push_back({"restarts5<restarts0", base("a").Restarts(5).Created(kNow - 10h),
                   base("b").Created(kNow - 1min)});
  // 8. newer creation first; same bucket → UID; a missing timestamp first.
  cases.push_back({"newer<older", base("a").Created(kNow - 1min).Uid("uid-z"),
                   base("b").Created(kNow - 1h).Uid("uid-a")});
  cases.push_back({"createdsamebucket-uid", base("a").Created(kNow - 100s).Uid("uid-1"),
                   base("b").Created(kNow - 110s).Uid("uid-2")});
  cases.push_back({"nocreation<created", base("a").Created(std::nullopt).Uid("uid-z"),
                   base("b").Created(kNow - 1s).Uid("uid-a")});
  // Ready pods with no transition time: the missing one counts as the most recent.
  cases.push_back({"noreadytime<readytime", base("a").Ready(std::nullopt).Created(kNow - 10h),
                   base("b").Ready(kNow - 1s).Restarts(3)});
  return cases;
}

// R9: each rule, in order of precedence.
TEST(ActivePodsWithRanksTest, RulesInOrderOfPrecedence) {
  for (const RankCase& c : RankCases()) {
    SCOPED_TRACE(c.name);
    ActivePodsWithRanks ranked{
        {c.first.Build(), c.second.Build()}, {c.first_rank, c.second_rank}, kNow};
    EXPECT_TRUE(ranked.Less(0, 1));
    EXPECT_FALSE(ranked.Less(1, 0));
  }
}

// R9: identical pods (same UID too) tie both ways.
TEST(ActivePodsWithRanksTest, EqualPodsTie) {
  PodPtr p = PodBuilder("a").Ready(kNow - 1h).Build();
  ActivePodsWithRanks ranked{{p, p}, {1, 1}, kNow};
  EXPECT_FALSE(ranked.Less(0, 1));
  EXPECT_FALSE(ranked.Less(1, 0));
}

// R9: Sort orders a mixed list and moves each rank with its pod.
TEST(ActivePodsWithRanksTest, SortOrdersPodsAndRanks) {
  ActivePodsWithRanks ranked{{PodBuilder("running-ready").Ready(kNow - 1h).Build(),
                              PodBuilder("pending").Phase(PodPhase::kPending).Build(),
                              PodBuilder("unscheduled").Node("").Build(),
                              PodBuilder("running-notready").NotReady().Build()},
                             {10, 20, 30, 40},
                             kNow};
  ranked.Sort();
  std::vector<std::string> names;
  for (const PodPtr& p : ranked.pods) names.push_back(p->metadata.name);
  EXPECT_EQ(names, (std::vector<std::string>{"unscheduled", "pending", "running-notready",
                                             "running-ready"}));
  EXPECT_EQ(ranked.rank, (std::vector<int>{30, 20, 40, 10}));
}

// R9: the bucketed comparison is not transitive; sorting many random pods must still return a
// permutation of the input in a deterministic order.
TEST(ActivePodsWithRanksTest, SortIsSafeAndDeterministicOnRandomPods) {
  std::mt19937 rng(42);
  std::vector<PodPtr> pods;
  std::vector<int> ranks;
  for (int i = 0; i < 500; ++i) {
    PodBuilder b("p" + std::to_string(i));
    b.Ready(kNow - std::chrono::seconds(rng() % 4000))
        .Created(kNow - std::chrono::seconds(rng() % 4000));
    b.Restarts(static_cast<int32_t>(rng() % 3));
    if (rng() % 5 == 0) b.NotReady();
    pods.push_back(b.Build());
    ranks.push_back(static_cast<int>(rng() % 3));
  }
  ActivePodsWithRanks first{pods, ranks, kNow};
  ActivePodsWithRanks second{pods, ranks, kNow};
  first.Sort();
  second.Sort();
  EXPECT_EQ(first.pods, second.pods);
  auto by_name = [](const PodPtr& a, const PodPtr& b) {
    return a->metadata.name < b->metadata.name;
  };
  std::vector<PodPtr> sorted = first.pods;
  std::sort(sorted.begin(), sorted.end(), by_name);
  std::vector<PodPtr> input = pods;
  std::sort(input.begin(), input.end(), by_name);
  EXPECT_EQ(sorted, input);
}

}  // namespace
}  // namespace kcm::controller
