// --sharding=namespace against an API server that ignores shardSelector (its ShardedListAndWatch
// gate off, as on a server older than v1.36): the list answers echo no shardInfo, so each replica
// says so once in its log, exports controller_sharding_server_side_filtering 0, keeps only its
// share of what it receives — and the namespaces are still divided, each written by its owner
// only. A private testbed (the harness's, sharding_harness.h) with the gate left at its default.
#include <cstdlib>

// Before the harness registers the environment whose SetUp runs `hack/testbed up`.
const bool kGateOff = [] { return ::setenv("KCM_TESTBED_APISERVER_FEATURE_GATES", "", 1) == 0; }();

#include "test/e2e/daemon/sharding_harness.h"

namespace kcm::e2e {
namespace {

// How many lines of `log` contain `text`.
int Lines(const std::string& log, const std::string& text) {
  std::istringstream in(log);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
  return n;
}

TEST_F(ShardingE2E, ServerWithoutTheGateIsFilteredOnOurSide) {
  KCM_REQUIRE_TESTBED();
  ASSERT_TRUE(kGateOff);
  // The server really ignores the option.
  auto raw = kEnv->Kubectl(
      {"get", "--raw",
       "/api/v1/"
       "namespaces?shardSelector=shardRange(object.metadata.namespace,%20%270x0000000000000000"
       "%27,%20%270x0000000000000001%27)"});
  ASSERT_TRUE(raw.ok()) << raw.Describe();
  ASSERT_EQ(raw.out.find("shardInfo"), std::string::npos) << raw.out;
  ASSERT_NE(raw.out.find("\"kube-system\""), std::string::npos) << "the server filtered";

  ASSERT_NO_FATAL_FAILURE(StartReplicas("kcm-e2e-fallback", 2));
  ASSERT_NO_FATAL_FAILURE(CreateWorkload("e2e-fallback-", 8, 2));
  std::map<std::string, int> per_replica = ExpectWrittenByTheirServers();
  for (auto& r : replicas_) {
    EXPECT_EQ(r->Metric("controller_sharding_server_side_filtering"), 0);
    EXPECT_EQ(Lines(r->Log(), "the API server ignores shardSelector"), 1) << r->Log();
    EXPECT_GT(per_replica[r->account()], 0);
    std::cout << "[sharding] without the gate, " << r->account() << " serves "
              << per_replica[r->account()] << " of the test's namespaces" << std::endl;
  }
}

}  // namespace
}  // namespace kcm::e2e
