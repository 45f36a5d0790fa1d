#include "pkg/cache/thread_safe_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pkg/cache/indexer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"

namespace kcm::cache {
namespace {

using ::kcm::mocks::MakeObj;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

std::vector<std::string> Names(const std::vector<api::ObjectPtr>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(o->Meta().name);
  std::sort(out.begin(), out.end());
  return out;
}

// Indexes an object by each label value of "app" (several values separated by ',').
std::vector<std::string> ByAppLabel(const api::Object& obj) {
  auto it = obj.Meta().labels.find("app");
  if (it == obj.Meta().labels.end()) return {};
  std::vector<std::string> out;
  std::string value(it->second);
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(value.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

api::ObjectPtr WithApp(std::string ns, std::string name, std::string app) {
  api::ObjectMeta meta;
  meta.namespace_ = std::move(ns);
  meta.name = std::move(name);
  meta.labels = {{"app", app}};
  return std::make_shared<mocks::FakeObject>(std::move(meta));
}

// 5.1
TEST(KeysTest, NamespacedClusterScopedAndTombstoneKeys) {
  EXPECT_EQ(MetaNamespaceKeyFunc(*MakeObj("ns", "a")), "ns/a");
  EXPECT_EQ(MetaNamespaceKeyFunc(*MakeObj("", "node-1")), "node-1");
  DeletedFinalStateUnknown tombstone("stored/key", MakeObj("ns", "a"));
  EXPECT_EQ(DeletionHandlingMetaNamespaceKeyFunc(tombstone), "stored/key");
  EXPECT_EQ(DeletionHandlingMetaNamespaceKeyFunc(*MakeObj("ns", "a")), "ns/a");
  ASSERT_NE(AsTombstone(tombstone), nullptr);
  EXPECT_EQ(AsTombstone(*MakeObj("ns", "a")), nullptr);

  auto split = SplitMetaNamespaceKey("ns/a");
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->first, "ns");
  EXPECT_EQ(split->second, "a");
  EXPECT_EQ(SplitMetaNamespaceKey("node-1")->first, "");
  EXPECT_FALSE(SplitMetaNamespaceKey("a/b/c").ok());
  EXPECT_FALSE(SplitMetaNamespaceKey("/b").ok());
}

// 5.1
TEST(ThreadSafeStoreTest, ItemsByKeyAddUpdateDeleteReplace) {
  auto store = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, {});
  ASSERT_TRUE(store->Add(MakeObj("ns", "a", "1")).ok());
  ASSERT_TRUE(store->Add(MakeObj("", "b", "1")).ok());
  EXPECT_THAT(store->ListKeys(), UnorderedElementsAre("ns/a", "b"));
  ASSERT_TRUE(store->Update(MakeObj("ns", "a", "2")).ok());
  EXPECT_EQ(store->GetByKey("ns/a")->Meta().resource_version, "2");
  EXPECT_EQ(store->Get(*MakeObj("ns", "a"))->Meta().resource_version, "2");
  ASSERT_TRUE(store->Delete(MakeObj("ns", "a")).ok());
  EXPECT_EQ(store->GetByKey("ns/a"), nullptr);
  // A tombstone deletes by its stored key even if its object's own key differs.
  ASSERT_TRUE(store->Delete(std::make_shared<DeletedFinalStateUnknown>("b", nullptr)).ok());
  EXPECT_THAT(store->List(), IsEmpty());

  ASSERT_TRUE(store->Add(MakeObj("ns", "old")).ok());
  ASSERT_TRUE(store->Replace({MakeObj("ns", "x"), MakeObj("ns", "y")}, "10").ok());
  EXPECT_THAT(Names(store->List()), ElementsAre("x", "y"));
  EXPECT_TRUE(store->Resync().ok());
}

// 5.2
TEST(ThreadSafeStoreTest, UpdateReindexesAndEmptySetsAreRemoved) {
  ThreadSafeStore store({{"app", ByAppLabel}});
  store.Add("ns/a", WithApp("ns", "a", "web,db"));
  store.Add("ns/b", WithApp("ns", "b", "web"));
  EXPECT_THAT(store.ListIndexFuncValues("app"), UnorderedElementsAre("web", "db"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/a", "ns/b"));

  store.Update("ns/a", WithApp("ns", "a", "cache"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/b"));
  EXPECT_THAT(*store.IndexKeys("app", "cache"), ElementsAre("ns/a"));
  // "db" had only ns/a; its empty set must be gone, not left behind as an empty value.
  EXPECT_THAT(store.ListIndexFuncValues("app"), UnorderedElementsAre("web", "cache"));

  store.Delete("ns/b");
  EXPECT_THAT(store.ListIndexFuncValues("app"), UnorderedElementsAre("cache"));
  store.Replace({{"ns/z", WithApp("ns", "z", "web")}});
  EXPECT_THAT(store.ListIndexFuncValues("app"), UnorderedElementsAre("web"));
}

// The indices hold the store's own copy of each key: the caller's key strings may be gone, keys
// stay listed in key order through updates, deletes, re-adds and a Replace.
TEST(ThreadSafeStoreTest, IndexKeysOutliveTheCallersKeyStrings) {
  ThreadSafeStore store({{"app", ByAppLabel}, {kNamespaceIndex, MetaNamespaceIndexFunc}});
  for (const char* name : {"c", "a", "b"}) {
    auto key = std::make_unique<std::string>(std::string("ns/") + name);
    store.Add(*key, WithApp("ns", name, "web"));
    key->assign(40, 'x');  // overwrite, then free, the caller's string
  }
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/a", "ns/b", "ns/c"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns"), ElementsAre("ns/a", "ns/b", "ns/c"));

  store.Update(std::string("ns/b"), WithApp("ns", "b", "web"));  // same values: no re-index
  store.Update(std::string("ns/c"), WithApp("ns", "c", "db"));
  store.Delete(std::string("ns/a"));
  store.Add(std::string("ns/a"), WithApp("ns", "a", "db"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/b"));
  EXPECT_THAT(*store.IndexKeys("app", "db"), ElementsAre("ns/a", "ns/c"));
  EXPECT_THAT(Names(*store.ByIndex(kNamespaceIndex, "ns")), ElementsAre("a", "b", "c"));

  store.Replace({{"ns/y", WithApp("ns", "y", "db")}, {"ns/x", WithApp("ns", "x", "db")}});
  EXPECT_THAT(*store.IndexKeys("app", "db"), ElementsAre("ns/x", "ns/y"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), IsEmpty());
  EXPECT_THAT(Names(*store.Index("app", *WithApp("ns", "probe", "db,web"))), ElementsAre("x", "y"));
  store.Delete("ns/x");
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns"), ElementsAre("ns/y"));
}

// 5.3
TEST(ThreadSafeStoreTest, IndexQueriesAndUnknownIndexIsAnError) {
  auto indexer = NewIndexer(MetaNamespaceKeyFunc, {{"app", ByAppLabel}});
  ASSERT_TRUE(indexer->Add(WithApp("ns", "a", "web,db")).ok());
  ASSERT_TRUE(indexer->Add(WithApp("ns", "b", "web")).ok());
  ASSERT_TRUE(indexer->Add(WithApp("ns", "c", "db")).ok());
  ASSERT_TRUE(indexer->Add(WithApp("ns", "d", "other")).ok());

  // Index: union over every value of the probe object.
  auto shared = indexer->Index("app", *WithApp("x", "probe", "web,db"));
  ASSERT_TRUE(shared.ok());
  EXPECT_THAT(Names(*shared), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Names(*indexer->ByIndex("app", "db")), ElementsAre("a", "c"));
  EXPECT_THAT(*indexer->IndexKeys("app", "none"), IsEmpty());
  EXPECT_THAT(*indexer->ByIndex("app", "none"), IsEmpty());

  EXPECT_FALSE(indexer->Index("nope", *WithApp("x", "p", "web")).ok());
  EXPECT_FALSE(indexer->ByIndex("nope", "web").ok());
  auto err = indexer->IndexKeys("nope", "web");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().reason, "IndexNotFound");
  EXPECT_THAT(indexer->ListIndexFuncValues("nope"), IsEmpty());

  // A second indexer of the same name is refused; a new one indexes existing items.
  EXPECT_FALSE(indexer->AddIndexers({{"app", ByAppLabel}}).ok());
  ASSERT_TRUE(indexer->AddIndexers({{kNamespaceIndex, MetaNamespaceIndexFunc}}).ok());
  EXPECT_EQ(indexer->ByIndex(kNamespaceIndex, "ns")->size(), 4u);
  EXPECT_EQ(indexer->GetIndexers().size(), 2u);
}

// 5.4
TEST(ThreadSafeStoreTest, StandardNamespaceIndex) {
  auto indexer = NewIndexer(MetaNamespaceKeyFunc, {{kNamespaceIndex, MetaNamespaceIndexFunc}});
  ASSERT_TRUE(indexer->Add(MakeObj("a", "x")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("a", "y")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("b", "x")).ok());
  ASSERT_TRUE(indexer->Add(MakeObj("", "cluster")).ok());
  EXPECT_THAT(*indexer->IndexKeys(kNamespaceIndex, "a"), ElementsAre("a/x", "a/y"));
  EXPECT_THAT(*indexer->IndexKeys(kNamespaceIndex, "b"), ElementsAre("b/x"));
  EXPECT_THAT(*indexer->IndexKeys(kNamespaceIndex, ""), ElementsAre("cluster"));
  EXPECT_THAT(indexer->ListIndexFuncValues(kNamespaceIndex), UnorderedElementsAre("a", "b", ""));
}

// Upsert is Add for a new key and Update for a known one, and tells which by what it returns.
TEST(ThreadSafeStoreTest, UpsertReturnsTheReplacedObjectAndReindexes) {
  const IndexFunc by_payload = [](const api::Object& o) {
    return std::vector<std::string>{static_cast<const mocks::FakeObject&>(o).payload};
  };
  auto indexer = NewIndexer(MetaNamespaceKeyFunc, {{"by-payload", by_payload}});
  EXPECT_EQ(indexer->Upsert(MakeObj("a", "x", "1", "old")), nullptr);
  api::ObjectPtr replaced = indexer->Upsert(MakeObj("a", "x", "2", "new"));
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(replaced->Meta().resource_version, "1");
  EXPECT_EQ(indexer->GetByKey("a/x")->Meta().resource_version, "2");
  EXPECT_THAT(*indexer->IndexKeys("by-payload", "new"), ElementsAre("a/x"));
  EXPECT_THAT(*indexer->IndexKeys("by-payload", "old"), IsEmpty());

  // ForEachKey hands out what ListKeys lists.
  EXPECT_EQ(indexer->Upsert(MakeObj("b", "a-longer-name-than-fits-inline", "1")), nullptr);
  std::vector<std::string> keys;
  indexer->ForEachKey([&](const std::string& key) { keys.push_back(key); });
  EXPECT_THAT(keys, UnorderedElementsAre("a/x", "b/a-longer-name-than-fits-inline"));
  EXPECT_THAT(indexer->ListKeys(), UnorderedElementsAreArray(keys));
}

}  // namespace
}  // namespace kcm::cache

namespace kcm::cache {
namespace {

// The sorted-vector key set keeps std::set's contract: each key text once, in key order, through
// inserts in any order, repeated inserts, erases of present and absent keys, and a bulk Sort.
TEST(IndexKeySetTest, KeyOrderAndUniquenessLikeASet) {
  std::vector<std::unique_ptr<StoreItem>> keys;
  std::set<std::string> want;
  IndexKeySet set;
  uint32_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 1103515245u + 12345u;  // deterministic pseudo-random order, with repeats
    // Half the items key by their object (namespace/name), half by a key of their own.
    const std::string name = "p" + std::to_string(x % 700);
    auto item = std::make_unique<StoreItem>();
    item->obj = MakeObj("ns", name);
    if (i % 2) item->own_key = std::make_unique<const std::string>("ns/" + name);
    keys.push_back(std::move(item));
    set.insert(keys.back().get());
    want.insert("ns/" + name);
    if (i % 3 == 0) {
      const std::string gone = "ns/p" + std::to_string((x / 7) % 700);
      EXPECT_EQ(set.erase(gone), want.erase(gone) == 1) << gone;
    }
  }
  std::vector<std::string> got;
  for (const StoreItem* item : set) got.push_back(item->Key().str());
  EXPECT_THAT(got, ElementsAreArray(want.begin(), want.end()));
  EXPECT_TRUE(set.contains(*want.begin()));
  EXPECT_FALSE(set.contains("ns/absent"));

  IndexKeySet bulk;
  for (const auto& item : keys) bulk.push_back_unsorted(item.get());
  bulk.Sort();
  std::set<std::string> all;
  for (const auto& item : keys) all.insert(item->Key().str());
  got.clear();
  for (const StoreItem* item : bulk) got.push_back(item->Key().str());
  EXPECT_THAT(got, ElementsAreArray(all.begin(), all.end()));
}

// A key in pieces compares, hashes and prints as its concatenated text, however it is split; the
// object's key is namespace/name, or the name alone when cluster-scoped.
TEST(KeyTextTest, ComparesAndHashesAsTheConcatenatedText) {
  const std::vector<std::string> texts = {"", "a", "a/", "a/b", "a/bc", "ab", "ab/c", "b", "a0"};
  for (const std::string& a : texts) {
    for (const std::string& b : texts) {
      for (size_t cut = 0; cut <= a.size(); ++cut) {
        const KeyText split(std::string_view(a).substr(0, cut), "",
                            std::string_view(a).substr(cut));
        const int want = std::string_view(a).compare(b);
        EXPECT_EQ(Compare(split, KeyText(b)) < 0, want < 0) << a << " vs " << b;
        EXPECT_EQ(Compare(split, KeyText(b)) == 0, want == 0) << a << " vs " << b;
        EXPECT_EQ(Compare(KeyText(b), split) > 0, want < 0) << a << " vs " << b;
        EXPECT_EQ(split.str(), a);
        EXPECT_EQ(HashKeyText(split), HashKeyText(KeyText(a)));
      }
    }
  }
  EXPECT_EQ(ObjectKeyText(*MakeObj("ns", "a")).str(), "ns/a");
  EXPECT_EQ(ObjectKeyText(*MakeObj("", "node-1")).str(), "node-1");
  // Keys longer than HashKeyText's stack buffer hash as their joined text too.
  const std::string ns(200, 'n');
  const std::string name(253, 'p');
  EXPECT_EQ(HashKeyText(KeyText(ns, "/", name)), HashKeyText(KeyText(ns + "/" + name)));
  EXPECT_NE(HashKeyText(KeyText(ns, "/", name)), HashKeyText(KeyText(ns, "/", name + "q")));
}

// A LIST arrives in key order, so a set mostly appends; an append must still refuse the last key
// again and keep the order when a smaller key follows.
TEST(IndexKeySetTest, AppendsInKeyOrderWithoutLosingTheSetRules) {
  std::vector<std::unique_ptr<StoreItem>> items;
  IndexKeySet set;
  auto add = [&](const std::string& name) {
    auto item = std::make_unique<StoreItem>();
    item->obj = MakeObj("ns", name);
    items.push_back(std::move(item));
    set.insert(items.back().get());
  };
  for (const char* name : {"a", "b", "c", "c", "ab", "d", "0"}) add(name);
  std::vector<std::string> got;
  for (const StoreItem* item : set) got.push_back(item->Key().str());
  EXPECT_THAT(got, ElementsAre("ns/0", "ns/a", "ns/ab", "ns/b", "ns/c", "ns/d"));
  EXPECT_TRUE(set.contains("ns/ab"));
}

// The sets live as long as the cache, so they hold little room beyond their keys: an owner's ten
// pods take room for ten (a doubling vector holds sixteen), a large set at most a quarter more,
// whether the keys come in order (a LIST) or not; a bulk build gives back its doubling's room.
TEST(IndexKeySetTest, HoldsLittleRoomBeyondItsKeys) {
  std::vector<std::unique_ptr<StoreItem>> items;
  auto item = [&](int i) {
    char name[16];
    std::snprintf(name, sizeof(name), "p%05d", i);
    items.push_back(std::make_unique<StoreItem>());
    items.back()->obj = MakeObj("ns", name);
    return static_cast<const StoreItem*>(items.back().get());
  };
  IndexKeySet ten;
  for (int i = 0; i < 10; ++i) ten.insert(item(i));
  EXPECT_EQ(ten.size(), 10u);
  EXPECT_EQ(ten.capacity(), 10u);

  std::vector<const StoreItem*> many;
  for (int i = 0; i < 5000; ++i) many.push_back(item(100 + i));
  IndexKeySet in_order;  // appends
  IndexKeySet reversed;  // inserts at the front
  for (size_t i = 0; i < many.size(); ++i) {
    in_order.insert(many[i]);
    reversed.insert(many[many.size() - 1 - i]);
  }
  for (const IndexKeySet* set : {&in_order, &reversed}) {
    EXPECT_EQ(set->size(), 5000u);
    EXPECT_EQ((*set->begin())->Key().str(), "ns/p00100");
    EXPECT_LE(set->capacity(), 5000u + 5000u / 4);
  }

  IndexKeySet bulk;
  for (size_t i = 0; i < 1000; ++i) bulk.push_back_unsorted(many[999 - i]);
  bulk.Sort();
  bulk.ShrinkToFit();
  EXPECT_EQ(bulk.size(), 1000u);
  EXPECT_EQ(bulk.capacity(), 1000u);
}

// The store holds no key text for an object that spells its key: Get, List, ListKeys and the
// indices find items by the object's namespace/name through Add, Update (also to an object whose
// name no longer spells the key, and back), Delete and Replace; a key of another form is kept.
TEST(ThreadSafeStoreTest, KeysReadFromTheObjectSurviveUpdateDeleteAndReplace) {
  ThreadSafeStore store({{"app", ByAppLabel}, {kNamespaceIndex, MetaNamespaceIndexFunc}});
  store.Add("ns/a", WithApp("ns", "a", "web"));
  store.Add("ns/b", WithApp("ns", "b", "web"));
  store.Add("other-key", WithApp("ns", "c", "db"));   // not the object's namespace/name
  store.Add("node-1", WithApp("", "node-1", "web"));  // cluster-scoped
  EXPECT_THAT(store.ListKeys(), UnorderedElementsAre("ns/a", "ns/b", "other-key", "node-1"));
  EXPECT_EQ(store.Get("other-key")->Meta().name, "c");
  EXPECT_EQ(store.Get("ns/c"), nullptr);
  EXPECT_EQ(store.Get("node-1")->Meta().name, "node-1");
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("node-1", "ns/a", "ns/b"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns"), ElementsAre("ns/a", "ns/b", "other-key"));

  // Update to an object that does not spell the key: the key stays "ns/a".
  store.Update("ns/a", WithApp("ns", "renamed", "db"));
  EXPECT_EQ(store.Get("ns/a")->Meta().name, "renamed");
  EXPECT_EQ(store.Get("ns/renamed"), nullptr);
  EXPECT_THAT(*store.IndexKeys("app", "db"), ElementsAre("ns/a", "other-key"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("node-1", "ns/b"));
  // And back to one that does.
  store.Update("ns/a", WithApp("ns", "a", "web"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("node-1", "ns/a", "ns/b"));
  EXPECT_THAT(Names(*store.ByIndex("app", "web")), ElementsAre("a", "b", "node-1"));

  store.Delete("ns/b");
  store.Delete("ns/absent");
  EXPECT_EQ(store.Get("ns/b"), nullptr);
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("node-1", "ns/a"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns"), ElementsAre("ns/a", "other-key"));
  // Re-adding a deleted key under the same text finds a fresh item.
  store.Add("ns/b", WithApp("ns", "b", "db"));
  EXPECT_THAT(*store.IndexKeys("app", "db"), ElementsAre("ns/b", "other-key"));

  store.Replace({{"ns/x", WithApp("ns", "x", "web")}, {"k2", WithApp("ns2", "y", "web")}});
  EXPECT_THAT(store.ListKeys(), UnorderedElementsAre("ns/x", "k2"));
  EXPECT_EQ(store.Get("ns/a"), nullptr);
  EXPECT_EQ(store.Get("k2")->Meta().name, "y");
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("k2", "ns/x"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns2"), ElementsAre("k2"));
  EXPECT_THAT(store.ListIndexFuncValues("app"), ElementsAre("web"));
}

// Many keys through growth and rehashing of the item set (the indices point at its nodes).
TEST(ThreadSafeStoreTest, IndicesStayValidThroughRehashing) {
  ThreadSafeStore store({{kNamespaceIndex, MetaNamespaceIndexFunc}});
  for (int i = 0; i < 3000; ++i) {
    const std::string name = "p" + std::to_string(i);
    store.Add("ns/" + name, MakeObj("ns", name));
    if (i % 4 == 0) store.Delete("ns/p" + std::to_string(i / 2));
  }
  std::set<std::string> want;
  for (const std::string& key : store.ListKeys()) want.insert(key);
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "ns"), ElementsAreArray(want.begin(), want.end()));
  for (const std::string& key : want) ASSERT_NE(store.Get(key), nullptr) << key;
}

// An index function that yields one value twice lists the key once, whether the index was built
// item by item (Add) or in bulk (Replace, AddIndexers).
TEST(ThreadSafeStoreTest, RepeatedIndexValueListsTheKeyOnce) {
  ThreadSafeStore store({{"app", ByAppLabel}});
  store.Add("ns/a", WithApp("ns", "a", "web,web"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/a"));
  store.Replace({{"ns/b", WithApp("ns", "b", "web,web")}, {"ns/a", WithApp("ns", "a", "web")}});
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/a", "ns/b"));
  ASSERT_TRUE(store.AddIndexers({{"app2", ByAppLabel}}).ok());
  EXPECT_THAT(*store.IndexKeys("app2", "web"), ElementsAre("ns/a", "ns/b"));
  store.Delete("ns/b");
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("ns/a"));
  EXPECT_THAT(*store.IndexKeys("app2", "web"), ElementsAre("ns/a"));
}

}  // namespace
}  // namespace kcm::cache
