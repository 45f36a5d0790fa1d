// --sharding=namespace end to end, balance by work (docs/design/sharding.md): each replica
// publishes, in its member Lease's annotation "kube-controller-manager-cpp/shard-work", the work
// its informer caches hold for the namespaces it serves (1 + pods + ReplicaSets each), and only
// for those; the coordinator then divides the namespaces by that work. The harness:
// sharding_harness.h.
#include "pkg/sharding/membership.h"
#include "pkg/sharding/shard_work.h"
#include "test/e2e/daemon/sharding_harness.h"

namespace kcm::e2e {
namespace {

// The shard-work annotation of `replica`'s member Lease, as the API server has it.
std::optional<sharding::ShardWork> PublishedWork(const std::string& group, Replica& replica) {
  auto r = kEnv->Kubectl(
      {"-n", "kube-system", "get", "lease", sharding::MemberLeaseName(group, replica.Identity()),
       "-o", "jsonpath={.metadata.annotations.kube-controller-manager-cpp/shard-work}"});
  if (!r.ok() || r.out.empty()) return std::nullopt;
  return sharding::ParseShardWork(r.out);
}

TEST_F(ShardingE2E, EachReplicaPublishesTheWorkItServes) {
  KCM_REQUIRE_TESTBED();
  ASSERT_NO_FATAL_FAILURE(StartReplicas("kcm-e2e-work", 2));
  // A Deployment of 3 in each: one ReplicaSet and 3 pods, weight 5.
  ASSERT_NO_FATAL_FAILURE(CreateWorkload("e2e-work-", 4, 3));
  std::string last;
  // Published at most every 10 s and written with the next renewal.
  const bool settled = Eventually(
      [&] {
        last.clear();
        for (const auto& ns : namespaces_) {
          Replica* server = ServerOf(ns);
          if (server == nullptr) return false;
          for (auto& r : replicas_) {
            auto work = PublishedWork(group_, *r);
            if (!work) {
              last = r->account() + " has published no valid work";
              return false;
            }
            const auto it = work->namespaces.find(ns);
            const int64_t weight = it == work->namespaces.end() ? 0 : it->second;
            if (weight != (r.get() == server ? 5 : 0)) {
              last = r->account() + " publishes " + ns + " at " + std::to_string(weight) +
                     (r.get() == server ? " (serves it)" : " (does not serve it)");
              return false;
            }
          }
        }
        return true;
      },
      45s, 500ms);
  EXPECT_TRUE(settled) << last << "\n" << replicas_[0]->Log();
  for (auto& r : replicas_) {
    auto work = PublishedWork(group_, *r);
    ASSERT_TRUE(work.has_value());
    std::cout << "[sharding] " << r->account() << " publishes " << sharding::EncodeShardWork(*work)
              << std::endl;
  }
  // Then the coordinator places by that work: the four busy namespaces (weight 5 against 1 for
  // the cluster's empty ones) end two and two, whatever the count-based split gave, once the load
  // was uneven for three retry periods.
  std::map<std::string, int> busy;
  const bool balanced = Eventually(
      [&] {
        busy.clear();
        for (const auto& ns : namespaces_) {
          Replica* server = ServerOf(ns);
          if (server == nullptr) return false;
          ++busy[server->account()];
        }
        return busy.size() == 2 && busy.begin()->second == 2;
      },
      60s, 500ms);
  for (const auto& [account, n] : busy) {
    std::cout << "[sharding] " << account << " serves " << n << " of the busy namespaces"
              << std::endl;
  }
  EXPECT_TRUE(balanced) << replicas_[0]->Log();
}

}  // namespace
}  // namespace kcm::e2e
