// GenericLister (pkg/cache/lister.h) over an indexer: list by namespace, get.
#include "pkg/cache/lister.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/cache/indexer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"

namespace kcm::cache {
namespace {

using namespace std::chrono_literals;
using ::kcm::mocks::MakeObj;

// 5.4 (lister over the namespace index)
TEST(GenericListerTest, ListByNamespaceAndGet) {
  auto indexer = NewIndexer(MetaNamespaceKeyFunc, {{kNamespaceIndex, MetaNamespaceIndexFunc}});
  ASSERT_TRUE(indexer->Add(MakeObj("a", "x", "1", "keep")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("a", "y", "1", "drop")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("b", "x", "1", "keep")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("", "node", "1", "keep")).ok());
  GenericLister lister(indexer);
  auto keep = [](const api::Object& o) {
    return static_cast<const mocks::FakeObject&>(o).payload == "keep";
  };
  EXPECT_EQ(lister.List().size(), 4u);
  EXPECT_EQ(lister.List(keep).size(), 3u);
  EXPECT_EQ(lister.ByNamespace("a").List().size(), 2u);
  EXPECT_EQ(lister.ByNamespace("a").List(keep).size(), 1u);
  EXPECT_EQ((*lister.ByNamespace("b").Get("x"))->Meta().namespace_, "b");
  auto missing = lister.ByNamespace("b").Get("y");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, 404);
  EXPECT_EQ(missing.error().reason, "NotFound");
  EXPECT_TRUE(lister.Get("node").ok());

  // Without the namespace index the namespace lister scans.
  auto plain = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(plain->Add(MakeObj("a", "x")).ok());
  ASSERT_TRUE(plain->Add(MakeObj("b", "x")).ok());
  EXPECT_EQ(GenericLister(plain).ByNamespace("a").List().size(), 1u);
}

}  // namespace
}  // namespace kcm::cache
