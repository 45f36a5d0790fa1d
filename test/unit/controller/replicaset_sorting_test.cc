#include "pkg/controller/replicaset_sorting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pkg/api/testing/objects.h"

namespace kcm::controller {
namespace {

using api::testing::kNow;
using api::testing::MakeReplicaSet;
using namespace std::chrono_literals;

template <typename Less>
std::vector<std::string> SortedNames(std::vector<ReplicaSetPtr> sets, Less less) {
  std::stable_sort(sets.begin(), sets.end(), less);
  std::vector<std::string> names;
  for (const auto& rs : sets) names.push_back(rs->metadata.name);
  return names;
}

// D3 (the oldest matching RS is the new one): older first, equal times by name, a missing
// creationTimestamp first.
TEST(ReplicaSetSortingTest, ByCreationTimestamp) {
  EXPECT_EQ(
      SortedNames({MakeReplicaSet("new", 1, kNow), MakeReplicaSet("b", 1, kNow - 1h),
                   MakeReplicaSet("a", 1, kNow - 1h), MakeReplicaSet("none", 1, std::nullopt)},
                  ReplicaSetsByCreationTimestamp()),
      (std::vector<std::string>{"none", "a", "b", "new"}));
}

// D9: proportional scaling walks RSs largest first; ties older first (scale down) or newer first
// (scale up).
TEST(ReplicaSetSortingTest, BySize) {
  std::vector<ReplicaSetPtr> sets = {MakeReplicaSet("small", 1, kNow - 3h),
                                     MakeReplicaSet("big-new", 5, kNow - 1h),
                                     MakeReplicaSet("big-old", 5, kNow - 2h)};
  EXPECT_EQ(SortedNames(sets, ReplicaSetsBySizeOlder()),
            (std::vector<std::string>{"big-old", "big-new", "small"}));
  EXPECT_EQ(SortedNames(sets, ReplicaSetsBySizeNewer()),
            (std::vector<std::string>{"big-new", "big-old", "small"}));
}

// D5, D16: revisions compare as integers (10 after 9); missing = 0; equal or unparsable
// revisions fall back to creation time.
TEST(ReplicaSetSortingTest, ByRevision) {
  EXPECT_EQ(SortedNames(
                {MakeReplicaSet("r10", 0, kNow - 5h, "10"), MakeReplicaSet("r9", 0, kNow - 1h, "9"),
                 MakeReplicaSet("none", 0, kNow), MakeReplicaSet("r9-older", 0, kNow - 2h, "9")},
                ReplicaSetsByRevision()),
            (std::vector<std::string>{"none", "r9-older", "r9", "r10"}));
  EXPECT_EQ(*Revision(MakeReplicaSet("x", 0, kNow, "12")->metadata), 12);
  EXPECT_EQ(*Revision(MakeReplicaSet("x", 0, kNow)->metadata), 0);
  EXPECT_FALSE(Revision(MakeReplicaSet("x", 0, kNow, "1a")->metadata).ok());
  EXPECT_FALSE(Revision(MakeReplicaSet("x", 0, kNow, "")->metadata).ok());
}

}  // namespace
}  // namespace kcm::controller
