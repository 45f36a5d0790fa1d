// ServedWork: the per-namespace object counts a replica publishes as its shard-work
// (docs/design/sharding.md, "Balance by work").
#include "pkg/sharding/served_work.h"

#include <gtest/gtest.h>

#include <memory>

#include "pkg/api/testing/fake_object.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/keys.h"

namespace kcm::sharding {
namespace {

std::shared_ptr<cache::Indexer> CacheOf(
    std::initializer_list<std::pair<const char*, const char*>> objects) {
  auto c = cache::NewIndexer(cache::MetaNamespaceKeyFunc, {});
  for (const auto& [ns, name] : objects) {
    EXPECT_TRUE(c->Add(std::make_shared<mocks::FakeObject>(ns, name)).ok());
  }
  return c;
}

TEST(ServedWorkTest, CountsEachNamespacesObjectsOverEveryRegisteredCache) {
  ServedWork work;
  auto pods = CacheOf({{"a", "p1"}, {"a", "p2"}, {"b", "p1"}});
  auto sets = CacheOf({{"a", "rs"}, {"c", "rs"}});
  auto first = work.Add({pods, sets});
  auto second = work.Add({CacheOf({{"b", "p9"}})});
  EXPECT_EQ(work.Count(), (std::map<std::string, int64_t>{{"a", 3}, {"b", 2}, {"c", 1}}));

  second.reset();  // its controllers ended: their caches no longer count
  EXPECT_EQ(work.Count(), (std::map<std::string, int64_t>{{"a", 3}, {"b", 1}, {"c", 1}}));
  first.reset();
  EXPECT_TRUE(work.Count().empty());
}

}  // namespace
}  // namespace kcm::sharding
