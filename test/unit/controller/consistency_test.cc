#include "pkg/controller/consistency.h"

#include <gtest/gtest.h>

#include <string>

namespace kcm::controller {
namespace {

// apimachinery resourceversion.CompareResourceVersion: decimal integers of any width, compared
// as numbers; anything else is not comparable.
TEST(CompareResourceVersionTest, ComparesAsIntegersOfAnyWidth) {
  EXPECT_EQ(*CompareResourceVersion("9", "10"), -1);
  EXPECT_EQ(*CompareResourceVersion("10", "9"), 1);
  EXPECT_EQ(*CompareResourceVersion("123", "123"), 0);
  EXPECT_EQ(*CompareResourceVersion("0", "1"), -1);
  EXPECT_EQ(*CompareResourceVersion("184467440737095516160", "18446744073709551615"), 1);
  EXPECT_FALSE(CompareResourceVersion("", "1").ok());
  EXPECT_FALSE(CompareResourceVersion("01", "1").ok());
  EXPECT_FALSE(CompareResourceVersion("1", "-1").ok());
  EXPECT_FALSE(CompareResourceVersion("1a", "1").ok());
}

struct Stores {
  std::string rs_rv;
  std::string pod_rv;
  ConsistencyStore store{
      {{"replicasets.apps", [this] { return rs_rv; }}, {"pods", [this] { return pod_rv; }}}};
};

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
