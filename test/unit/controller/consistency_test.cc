#include "pkg/controller/consistency.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kcm::controller {
namespace {

struct Stores {
  std::string rs_rv;
  std::string pod_rv;
  ConsistencyStore store{{{"replicasets.apps", [this](std::string_view) { return rs_rv; }},
                          {"pods", [this](std::string_view) { return pod_rv; }}}};
};

// A store's watermark is asked for the owner's objects: with a source per shard, one shard's
// stream can be far ahead of another's (SharedIndexInformer::LastStoreSyncResourceVersionFor).
TEST(ConsistencyStoreTest, EachOwnerIsCheckedAgainstItsOwnWatermark) {
  std::vector<std::string> asked;
  ConsistencyStore store({{"pods", [&](std::string_view owner) {
                             asked.emplace_back(owner);
                             return std::string(owner.starts_with("fast/") ? "20" : "3");
                           }}});
  store.WroteAt("slow/rs", "uid-1", "pods", "8");
  store.WroteAt("fast/rs", "uid-2", "pods", "8");  // applied already by its own store
  std::optional<ConsistencyError> stale = store.EnsureReady("slow/rs");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->read_rv, "3");
  EXPECT_FALSE(store.EnsureReady("fast/rs").has_value());
  EXPECT_EQ(store.Size(), 1u) << "only the slow owner has a record";
  EXPECT_EQ(asked, (std::vector<std::string>{"slow/rs", "fast/rs", "slow/rs"}));
}

// Upstream consistencyStore.EnsureReady: ready once every store read at least the written RV.
TEST(ConsistencyStoreTest, NotReadyUntilEveryStoreCaughtUpWithTheWrites) {
  Stores s;
  s.rs_rv = "5";
  s.pod_rv = "5";
  EXPECT_FALSE(s.store.EnsureReady("ns/rs").has_value());  // nothing written

  s.store.WroteAt("ns/rs", "uid-1", "replicasets.apps", "10");
  s.store.WroteAt("ns/rs", "uid-1", "pods", "12");
  s.store.WroteAt("ns/rs", "uid-1", "pods", "11");  // older than what is recorded: ignored
  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/rs");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->Message(),
            "read version: 5 is not as new as written version: 12 for group resource pods");

  s.pod_rv = "12";
  stale = s.store.EnsureReady("ns/rs");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->group_resource, "replicasets.apps");
  EXPECT_EQ(stale->wrote_rv, "10");

  s.rs_rv = "11";  // newer than the write: fine
  EXPECT_FALSE(s.store.EnsureReady("ns/rs").has_value());
  EXPECT_EQ(s.store.Size(), 0u);  // a ready owner's record is dropped
  s.rs_rv = "1";
  EXPECT_FALSE(s.store.EnsureReady("ns/rs").has_value());
}

TEST(ConsistencyStoreTest, UnsyncedStoreIsNotReadyAndUncomparableVersionsDoNotBlock) {
  Stores s;
  s.store.WroteAt("ns/rs", "uid-1", "pods", "3");
  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/rs");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->Message(),
            "read version is not synced (written version: 3) for group resource pods");
  s.pod_rv = "not-a-number";
  EXPECT_FALSE(s.store.EnsureReady("ns/rs").has_value());
  // A write whose RV does not compare is never recorded.
  s.store.WroteAt("ns/other", "uid-2", "pods", "x");
  EXPECT_EQ(s.store.Size(), 0u);
}

// A write the store has applied already — every converged sync makes one, its skipped status
// update reporting the cached resourceVersion — leaves no record behind (it would be ready at
// once); with a record already there for the owner it goes in as before.
TEST(ConsistencyStoreTest, WriteTheStoreHasAppliedLeavesNoRecord) {
  Stores s;
  s.rs_rv = "20";
  s.pod_rv = "20";
  s.store.WroteAt("ns/a", "uid-a", "replicasets.apps", "20");
  s.store.WroteAt("ns/b", "uid-b", "replicasets.apps", "7");
  EXPECT_EQ(s.store.Size(), 0u);
  EXPECT_FALSE(s.store.EnsureReady("ns/a").has_value());

  // A sync that created pods first: their write makes the record, the status write joins it.
  s.store.WroteAt("ns/c", "uid-c", "pods", "25");
  s.store.WroteAt("ns/c", "uid-c", "replicasets.apps", "20");
  EXPECT_EQ(s.store.Size(), 1u);
  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/c");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->group_resource, "pods");
  s.pod_rv = "25";
  EXPECT_FALSE(s.store.EnsureReady("ns/c").has_value());
  EXPECT_EQ(s.store.Size(), 0u);

  // Not applied yet: recorded, and not ready until it is.
  s.store.WroteAt("ns/a", "uid-a", "replicasets.apps", "21");
  EXPECT_EQ(s.store.Size(), 1u);
  ASSERT_TRUE(s.store.EnsureReady("ns/a").has_value());
  s.rs_rv = "21";
  EXPECT_FALSE(s.store.EnsureReady("ns/a").has_value());
}

// With a ready sink, a stale owner waits in the store and is handed to the sink when
// StoresAdvanced finds every store caught up: not before, and once. (Upstream's syncReplicaSet
// returns the consistency error instead, and processNextWorkItem's AddRateLimited brings the key
// back after a backoff that grows with each skip; docs/design/controllers.md.)
TEST(ConsistencyStoreTest, WaitingOwnerGoesToTheSinkWhenTheStoresCatchUp) {
  Stores s;
  s.rs_rv = "5";
  s.pod_rv = "5";
  std::vector<std::string> woken;
  s.store.SetReadySink([&](const std::string& owner) { woken.push_back(owner); });
  s.store.WroteAt("ns/rs", "uid-1", "replicasets.apps", "10");
  s.store.WroteAt("ns/rs", "uid-1", "pods", "12");

  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/rs", /*wait=*/true);
  ASSERT_TRUE(stale.has_value());
  EXPECT_TRUE(stale->waiting);
  EXPECT_EQ(s.store.Waiting(), 1u);

  s.pod_rv = "12";
  s.store.StoresAdvanced();
  EXPECT_TRUE(woken.empty());  // the ReplicaSet store is still behind
  s.rs_rv = "10";
  s.store.StoresAdvanced();
  s.store.StoresAdvanced();
  EXPECT_EQ(woken, std::vector<std::string>{"ns/rs"});
  EXPECT_EQ(s.store.Waiting(), 0u);
  // The woken sync finds it ready and drops the record.
  EXPECT_FALSE(s.store.EnsureReady("ns/rs", /*wait=*/true).has_value());
  EXPECT_EQ(s.store.Size(), 0u);
}

TEST(ConsistencyStoreTest, WithoutASinkNothingWaits) {
  Stores s;
  s.rs_rv = "5";
  s.store.WroteAt("ns/rs", "uid-1", "replicasets.apps", "10");
  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/rs", /*wait=*/true);
  ASSERT_TRUE(stale.has_value());
  EXPECT_FALSE(stale->waiting);  // the caller requeues by itself
  EXPECT_EQ(s.store.Waiting(), 0u);

  // Clearing the sink forgets whoever waited: nothing would hand them on.
  std::vector<std::string> woken;
  s.store.SetReadySink([&](const std::string& owner) { woken.push_back(owner); });
  EXPECT_TRUE(s.store.EnsureReady("ns/rs", /*wait=*/true)->waiting);
  s.store.SetReadySink(nullptr);
  EXPECT_EQ(s.store.Waiting(), 0u);
  s.rs_rv = "10";
  s.store.StoresAdvanced();
  EXPECT_TRUE(woken.empty());
}

// A store that catches up between EnsureReady's check and its registering the owner (the
// advance's notification came too early to find it) is seen by the second check: the sync goes
// ahead now, and nothing is left waiting for a notification that already passed.
TEST(ConsistencyStoreTest, CatchUpWhileRegisteringIsNotMissed) {
  int reads = 0;
  ConsistencyStore store(
      {{"pods", [&](std::string_view) { return ++reads == 1 ? std::string("5") : "12"; }}});
  std::vector<std::string> woken;
  store.SetReadySink([&](const std::string& owner) { woken.push_back(owner); });
  store.WroteAt("ns/rs", "uid-1", "pods", "12");
  EXPECT_FALSE(store.EnsureReady("ns/rs", /*wait=*/true).has_value());
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(store.Waiting(), 0u);
  store.StoresAdvanced();
  EXPECT_TRUE(woken.empty());
}

// A deleted owner (Clear) stops waiting.
TEST(ConsistencyStoreTest, ClearedOwnerIsNotWoken) {
  Stores s;
  s.pod_rv = "1";
  std::vector<std::string> woken;
  s.store.SetReadySink([&](const std::string& owner) { woken.push_back(owner); });
  s.store.WroteAt("ns/rs", "uid-1", "pods", "12");
  EXPECT_TRUE(s.store.EnsureReady("ns/rs", /*wait=*/true)->waiting);
  s.store.Clear("ns/rs", "");
  EXPECT_EQ(s.store.Waiting(), 0u);
  s.pod_rv = "12";
  s.store.StoresAdvanced();
  EXPECT_TRUE(woken.empty());
}

TEST(ConsistencyStoreTest, WriteForAStoreThatDoesNotExistIsNeverReady) {
  Stores s;
  s.store.WroteAt("ns/rs", "uid-1", "deployments.apps", "3");
  std::optional<ConsistencyError> stale = s.store.EnsureReady("ns/rs");
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->group_resource, "deployments.apps");
}

// Upstream Clear: by uid, or any uid when empty; a recreated owner (new uid) starts clean.
TEST(ConsistencyStoreTest, ClearAndRecreatedOwnersGoByUid) {
  Stores s;
  s.pod_rv = "1";
  s.store.WroteAt("ns/rs", "uid-1", "pods", "9");
  s.store.Clear("ns/rs", "uid-other");
  EXPECT_TRUE(s.store.EnsureReady("ns/rs").has_value());
  s.store.WroteAt("ns/rs", "uid-2", "pods", "2");  // recreated: the old record goes
  EXPECT_EQ(s.store.EnsureReady("ns/rs")->wrote_rv, "2");
  s.store.Clear("ns/rs", "");
  EXPECT_FALSE(s.store.EnsureReady("ns/rs").has_value());
}

}  // namespace
}  // namespace kcm::controller
