// ShardedListerWatcher: asks for the shard on every LIST and WATCH, keeps only the shard whether
// or not the server applied the selector, and tells which it was.
#include "pkg/informers/sharded_lister_watcher.h"

#include <gtest/gtest.h>

#include "pkg/cache/testing/fake_lister_watcher.h"

namespace kcm::informers {
namespace {

using mocks::FakeListerWatcher;
using mocks::MakeObj;

api::ShardSelector OnlyNamespace(const std::string& ns) {
  const uint64_t h = api::ShardHash(ns);
  return api::ShardSelector(api::ShardField::kNamespace, {{h, h}});
}

std::vector<std::string> Names(const std::vector<api::ObjectPtr>& items) {
  std::vector<std::string> out;
  for (const auto& o : items) out.push_back(o->Meta().name);
  return out;
}

TEST(ShardedListerWatcherTest, AsksForTheShardAndKeepsItWhenTheServerIgnoresIt) {
  auto inner = std::make_shared<FakeListerWatcher>();
  // A server without the gate: everything, no shardInfo.
  inner->ScriptList({MakeObj("mine", "a"), MakeObj("other", "b"), MakeObj("mine", "c")}, "10");
  std::vector<bool> told;
  ShardedListerWatcher lw(inner, OnlyNamespace("mine"), [&](bool s) { told.push_back(s); });
  api::ListOptions opts;
  opts.label_selector = "app=x";
  auto list = lw.List(opts);
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(Names(list->items), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(told, std::vector<bool>{false});
  ASSERT_EQ(inner->list_calls().size(), 1u);
  EXPECT_EQ(inner->list_calls()[0].shard_selector, OnlyNamespace("mine").String());
  EXPECT_EQ(inner->list_calls()[0].label_selector, "app=x");
}

TEST(ShardedListerWatcherTest, ReportsAServerThatFilters) {
  auto inner = std::make_shared<FakeListerWatcher>();
  api::ObjectList answer;
  answer.items = {MakeObj("mine", "a")};
  answer.resource_version = "3";
  answer.shard_selector = OnlyNamespace("mine").String();
  inner->ScriptList(Result<api::ObjectList>(answer));
  std::vector<bool> told;
  ShardedListerWatcher lw(inner, OnlyNamespace("mine"), [&](bool s) { told.push_back(s); });
  // Items arrive through on_item as a streamed list would hand them.
  std::vector<std::string> seen;
  auto list = lw.List({}, [&](api::ObjectPtr o) -> api::ObjectPtr {
    if (o != nullptr) seen.push_back(o->Meta().name);
    return o;
  });
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
  EXPECT_EQ(told, std::vector<bool>{true});
}

TEST(ShardedListerWatcherTest, WatchKeepsTheShardAndPassesBookmarksAndErrors) {
  auto inner = std::make_shared<FakeListerWatcher>();
  auto fake = inner->ScriptWatch();
  ShardedListerWatcher lw(inner, OnlyNamespace("mine"));
  auto watch = lw.Watch({});
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(inner->watch_calls()[0].shard_selector, OnlyNamespace("mine").String());
  fake->Push(api::WatchEventType::kAdded, MakeObj("other", "x", "4"));
  fake->Push(api::WatchEventType::kModified, MakeObj("mine", "a", "5"));
  fake->Push(api::WatchEventType::kDeleted, MakeObj("other", "y", "6"));
  fake->PushBookmark("7");
  fake->PushError(Error{410, "Expired", "too old", {}});
  fake->Close();
  std::vector<api::WatchEventType> types;
  for (;;) {
    auto e = (*watch)->Next();
    ASSERT_TRUE(e.ok());
    if (!e->has_value()) break;
    types.push_back((*e)->type);
    if ((*e)->type == api::WatchEventType::kModified) {
      EXPECT_EQ((*e)->object->Meta().name, "a");
    }
  }
  EXPECT_EQ(types, (std::vector<api::WatchEventType>{api::WatchEventType::kModified,
                                                     api::WatchEventType::kBookmark,
                                                     api::WatchEventType::kError}));
}

}  // namespace
}  // namespace kcm::informers
