#include "pkg/cache/delta_fifo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "pkg/cache/indexer.h"
#include "pkg/cache/testing/fake_lister_watcher.h"
#include "test/unit/cache/delta_fifo_test_util.h"

namespace kcm::cache {
namespace {

using ::kcm::mocks::MakeObj;
using ::kcm::mocks::Payload;
using ::testing::ElementsAre;

// 3.1
TEST(DeltaFIFOTest, DeltasKeptInOrderAndKeyQueuedOnce) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1", "a1")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "1")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "2", "a2")).ok());
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "3", "a3"), MakeObj("ns", "b", "1")}, "3").ok());
  // Re-adding the queued key "ns/a" keeps its place ahead of "ns/b".
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/b"));

  Popped a = PopOne(fifo);
  EXPECT_EQ(a.key, "ns/a");
  EXPECT_THAT(Types(a.deltas),
              ElementsAre(DeltaType::kAdded, DeltaType::kUpdated, DeltaType::kReplaced));
  EXPECT_EQ(Payload(a.deltas[0].object), "a1");
  EXPECT_EQ(Payload(a.deltas[2].object), "a3");
  EXPECT_EQ(PopOne(fifo).key, "ns/b");
  EXPECT_EQ(fifo.Len(), 0u);
  EXPECT_EQ(DeltaTypeName(DeltaType::kReplaced), "Replaced");
}

// 3.2
TEST(DeltaFIFOTest, OnlyTwoConsecutiveDeletesMergeKeepingTheRealObject) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a")).ok());
  ASSERT_TRUE(
      fifo.Delete(std::make_shared<DeletedFinalStateUnknown>("ns/a", MakeObj("ns", "a"))).ok());
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "a", "1", "real")).ok());
  Deltas deltas = fifo.GetByKey("ns/a");
  ASSERT_THAT(Types(deltas), ElementsAre(DeltaType::kAdded, DeltaType::kDeleted));
  EXPECT_EQ(AsTombstone(*deltas[1].object), nullptr) << "real object must win over the tombstone";
  EXPECT_EQ(Payload(deltas[1].object), "real");

  // The older real deletion is kept over a newer tombstone.
  ASSERT_TRUE(
      fifo.Delete(std::make_shared<DeletedFinalStateUnknown>("ns/a", MakeObj("ns", "a"))).ok());
  EXPECT_EQ(fifo.GetByKey("ns/a").size(), 2u);
  EXPECT_EQ(AsTombstone(*fifo.GetByKey("ns/a")[1].object), nullptr);

  // Two updates are not merged.
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "b", "1")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "b", "1")).ok());
  EXPECT_EQ(fifo.GetByKey("ns/b").size(), 2u);
}

// 3.3
TEST(DeltaFIFOTest, DeleteOfUnknownKeyIsDropped) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "known")).ok());
  DeltaFIFO fifo({.known_objects = known});
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "ghost")).ok());
  EXPECT_EQ(fifo.Len(), 0u);
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "known")).ok());
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/known"));

  // Without known objects only queued keys count.
  DeltaFIFO bare({});
  ASSERT_TRUE(bare.Delete(MakeObj("ns", "x")).ok());
  EXPECT_EQ(bare.Len(), 0u);
  ASSERT_TRUE(bare.Add(MakeObj("ns", "x")).ok());
  ASSERT_TRUE(bare.Delete(MakeObj("ns", "x")).ok());
  EXPECT_EQ(bare.GetByKey("ns/x").size(), 2u);
}

// 3.4
TEST(DeltaFIFOTest, ReplaceQueuesReplacedAndTombstonesForVanishedKeys) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "known-gone", "5", "last-known")).ok());
  ASSERT_TRUE(known->Add(MakeObj("ns", "kept", "5")).ok());
  DeltaFIFO fifo({.known_objects = known});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "queued-gone", "6", "queued")).ok());

  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "kept", "7"), MakeObj("ns", "new", "7")}, "7").ok());

  EXPECT_THAT(Types(fifo.GetByKey("ns/kept")), ElementsAre(DeltaType::kReplaced));
  EXPECT_THAT(Types(fifo.GetByKey("ns/new")), ElementsAre(DeltaType::kReplaced));

  Deltas queued = fifo.GetByKey("ns/queued-gone");
  ASSERT_THAT(Types(queued), ElementsAre(DeltaType::kAdded, DeltaType::kDeleted));
  const auto* t1 = AsTombstone(*queued[1].object);
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->Key(), "ns/queued-gone");
  EXPECT_EQ(Payload(t1->Obj()), "queued");

  Deltas known_gone = fifo.GetByKey("ns/known-gone");
  ASSERT_THAT(Types(known_gone), ElementsAre(DeltaType::kDeleted));
  const auto* t2 = AsTombstone(*known_gone[0].object);
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->Key(), "ns/known-gone");
  EXPECT_EQ(Payload(t2->Obj()), "last-known");

  // A second Replace must not wrap the queued tombstone in another tombstone.
  ASSERT_TRUE(fifo.Replace({}, "8").ok());
  Deltas again = fifo.GetByKey("ns/queued-gone");
  const auto* t3 = AsTombstone(*again.back().object);
  ASSERT_NE(t3, nullptr);
  EXPECT_EQ(AsTombstone(*t3->Obj()), nullptr);
}

// 3.5
TEST(DeltaFIFOTest, HasSyncedAfterInitialReplaceIsPoppedAndInitialListFlag) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "stale")).ok());
  DeltaFIFO fifo({.known_objects = known});
  EXPECT_FALSE(fifo.HasSynced());
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a"), MakeObj("ns", "b")}, "1").ok());
  EXPECT_FALSE(fifo.HasSynced());
  // An event after the list for a new key is not part of the initial list.
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "c")).ok());

  std::vector<bool> initial;
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(fifo.HasSynced());
    initial.push_back(PopOne(fifo).is_in_initial_list);
  }
  // Two listed items plus one tombstone make up the initial population.
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_THAT(initial, ElementsAre(true, true, true));
  EXPECT_FALSE(PopOne(fifo).is_in_initial_list);

  // Any Add/Update/Delete before the first Replace means synced at once.
  DeltaFIFO direct({});
  ASSERT_TRUE(direct.Update(MakeObj("ns", "a")).ok());
  EXPECT_TRUE(direct.HasSynced());
  ASSERT_TRUE(direct.Replace({MakeObj("ns", "b")}, "1").ok());
  EXPECT_TRUE(direct.HasSynced());

  // An empty first list is synced at once.
  DeltaFIFO empty({});
  ASSERT_TRUE(empty.Replace({}, "1").ok());
  EXPECT_TRUE(empty.HasSynced());
}

// Pops one key and applies it to a known-objects indexer, as the informer does.
Popped PopInto(DeltaFIFO& fifo, Indexer& indexer) {
  Popped out;
  Status s = fifo.Pop([&](const Deltas& deltas, bool initial) {
    out.key = fifo.KeyOf(*deltas.back().object);
    out.deltas = deltas;
    out.is_in_initial_list = initial;
    for (const Delta& d : deltas) {
      Status applied = d.type == DeltaType::kDeleted ? indexer.Delete(d.object)
                       : indexer.Get(*d.object)      ? indexer.Update(d.object)
                                                     : indexer.Add(d.object);
      if (!applied.ok()) return applied;
    }
    return OkStatus();
  });
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  return out;
}

std::vector<api::ObjectPtr> Objs(std::vector<api::ObjectPtr> objs) {
  return objs;
}

// The first list taken as it arrives is the initial list: its items are popped (as initial-list
// items, Replaced) while it is still open, HasSynced and the watermark wait for EndList and the
// last of its items.
TEST(DeltaFIFOTest, ListTakenAsItArrivesSyncsAtItsEndAndItsLastItem) {
  auto known = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, {});
  DeltaFIFO fifo({.known_objects = known});
  ASSERT_TRUE(fifo.BeginList());
  EXPECT_FALSE(fifo.BeginList()) << "one list at a time";
  auto batch = Objs({MakeObj("ns", "a", "3"), MakeObj("ns", "b", "4")});
  ASSERT_TRUE(fifo.AddListItems(batch).ok());
  EXPECT_TRUE(batch.empty());
  Popped a = PopInto(fifo, *known);
  EXPECT_EQ(a.key, "ns/a");
  EXPECT_THAT(Types(a.deltas), ElementsAre(DeltaType::kReplaced));
  EXPECT_TRUE(a.is_in_initial_list);
  EXPECT_TRUE(PopInto(fifo, *known).is_in_initial_list);
  // Everything queued so far is applied, but the list has not ended.
  EXPECT_FALSE(fifo.HasSynced());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");

  batch = Objs({MakeObj("ns", "c", "5")});
  ASSERT_TRUE(fifo.EndList(batch, "9").ok());
  EXPECT_TRUE(batch.empty());
  EXPECT_FALSE(fifo.HasSynced()) << "c is not popped yet";
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");
  EXPECT_TRUE(PopInto(fifo, *known).is_in_initial_list);
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "9");
  EXPECT_EQ(known->ListKeys().size(), 3u);

  // Later lists are not taken this way: they may make keys vanish.
  EXPECT_FALSE(fifo.BeginList());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "d", "10")).ok());
  EXPECT_FALSE(PopInto(fifo, *known).is_in_initial_list);

  // Not after an event came before any list, nor with objects already known.
  DeltaFIFO direct({});
  ASSERT_TRUE(direct.Add(MakeObj("ns", "x")).ok());
  EXPECT_FALSE(direct.BeginList());
  DeltaFIFO with_known({.known_objects = known});
  EXPECT_FALSE(with_known.BeginList());

  // An empty list is synced at its end.
  DeltaFIFO empty({});
  ASSERT_TRUE(empty.BeginList());
  std::vector<api::ObjectPtr> none;
  ASSERT_TRUE(empty.EndList(none, "4").ok());
  EXPECT_TRUE(empty.HasSynced());
  EXPECT_EQ(empty.LastStoreSyncResourceVersion(), "4");
}

// A list given up after part of it was taken: what was taken stays (applied or queued), HasSynced
// stays false, and the next list goes to Replace, which tombstones every taken key it does not
// list (queued or already applied) and counts them all into the initial population.
TEST(DeltaFIFOTest, AbortedListIsReconciledByTheNextReplace) {
  auto known = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, {});
  DeltaFIFO fifo({.known_objects = known});
  ASSERT_TRUE(fifo.BeginList());
  auto batch = Objs({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "1"), MakeObj("ns", "c", "1")});
  ASSERT_TRUE(fifo.AddListItems(batch).ok());
  PopInto(fifo, *known);  // a
  PopInto(fifo, *known);  // b
  fifo.AbortList();
  EXPECT_FALSE(fifo.HasSynced());
  EXPECT_FALSE(fifo.BeginList()) << "a list was taken in part";

  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "2"), MakeObj("ns", "d", "2")}, "2").ok());
  EXPECT_THAT(Types(fifo.GetByKey("ns/c")), ElementsAre(DeltaType::kReplaced, DeltaType::kDeleted));
  EXPECT_THAT(Types(fifo.GetByKey("ns/b")), ElementsAre(DeltaType::kDeleted));
  EXPECT_THAT(Types(fifo.GetByKey("ns/a")), ElementsAre(DeltaType::kReplaced));
  EXPECT_EQ(fifo.Len(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(fifo.HasSynced());
    EXPECT_TRUE(PopInto(fifo, *known).is_in_initial_list);
  }
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "2");
  std::vector<std::string> keys = known->ListKeys();
  std::sort(keys.begin(), keys.end());
  EXPECT_THAT(keys, ElementsAre("ns/a", "ns/d"));
}

// A transform error stops the batch at the failing item, as Replace stops at it.
TEST(DeltaFIFOTest, ListItemsTransformErrorIsReturned) {
  DeltaFIFO fifo({.transform = [](api::ObjectPtr obj) -> Result<api::ObjectPtr> {
    if (obj->Meta().name == "bad") return Error::Local("Bad", "refused");
    return obj;
  }});
  ASSERT_TRUE(fifo.BeginList());
  auto batch = Objs({MakeObj("ns", "a", "1"), MakeObj("ns", "bad", "1"), MakeObj("ns", "c", "1")});
  EXPECT_FALSE(fifo.AddListItems(batch).ok());
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a"));
  fifo.AbortList();
  EXPECT_FALSE(fifo.HasSynced());
}

// 3.6
TEST(DeltaFIFOTest, ResyncQueuesSyncOnlyForKnownKeysWithoutQueuedDeltas) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "idle", "1")).ok());
  ASSERT_TRUE(known->Add(MakeObj("ns", "busy", "1")).ok());
  DeltaFIFO fifo({.known_objects = known});
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "busy", "2")).ok());
  ASSERT_TRUE(fifo.Resync().ok());
  EXPECT_THAT(Types(fifo.GetByKey("ns/idle")), ElementsAre(DeltaType::kSync));
  EXPECT_THAT(Types(fifo.GetByKey("ns/busy")), ElementsAre(DeltaType::kUpdated));

  DeltaFIFO no_known({});
  ASSERT_TRUE(no_known.Resync().ok());
  EXPECT_EQ(no_known.Len(), 0u);
}

// 3.7
TEST(DeltaFIFOTest, PopBlocksUntilItemThenProcessesAllDeltasOldestFirst) {
  DeltaFIFO fifo({});
  std::atomic<bool> popped{false};
  std::jthread consumer([&] {
    Popped p = PopOne(fifo);
    EXPECT_EQ(p.key, "ns/a");
    popped = true;
  });
  // Not a timer wait: only a chance for a wrong implementation to return early.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(popped.load());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a")).ok());
  consumer.join();
  EXPECT_TRUE(popped.load());

  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "1")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "b", "2")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "b", "3")).ok());
  Popped b = PopOne(fifo);
  ASSERT_EQ(b.deltas.size(), 3u);
  EXPECT_EQ(b.deltas[0].object->Meta().resource_version, "1");
  EXPECT_EQ(b.deltas[2].object->Meta().resource_version, "3");
}

// 3.7
TEST(DeltaFIFOTest, CloseWakesBlockedPopAndProcessErrorIsNotRequeued) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a")).ok());
  Status failed = fifo.Pop(
      [](const Deltas&, bool) -> Status { return Error::Local("Boom", "handler failed"); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().reason, "Boom");
  EXPECT_EQ(fifo.Len(), 0u) << "upstream no longer requeues on a process error";

  Status closed;
  std::jthread consumer([&] { closed = fifo.Pop([](const Deltas&, bool) { return OkStatus(); }); });
  fifo.Close();
  consumer.join();
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().reason, "FIFOClosed");
  EXPECT_TRUE(fifo.IsClosed());
}

// A relisted item that is the same write as the one held (same key, kind, uid and RV) is swapped
// for the held object, the newest queued one first, so the relist need not keep a second copy.
TEST(DeltaFIFOTest, ReuseUnchangedHandsBackTheHeldObjectOfTheSameWrite) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  api::ObjectPtr cached = MakeObj("ns", "cached", "5", "held");
  ASSERT_TRUE(known->Add(cached).ok());
  DeltaFIFO fifo({.known_objects = known});

  // Known, same RV → the known object; another RV, or another uid (the object was recreated at
  // the same name), or no RV → the new one.
  EXPECT_EQ(fifo.ReuseUnchanged(MakeObj("ns", "cached", "5", "new")), cached);
  EXPECT_EQ(Payload(fifo.ReuseUnchanged(MakeObj("ns", "cached", "6", "new"))), "new");
  api::ObjectMeta other_uid;
  other_uid.namespace_ = "ns";
  other_uid.name = "cached";
  other_uid.resource_version = "5";
  other_uid.uid = "another";
  EXPECT_EQ(
      Payload(fifo.ReuseUnchanged(std::make_shared<mocks::FakeObject>(other_uid, "recreated"))),
      "recreated");
  EXPECT_EQ(Payload(fifo.ReuseUnchanged(MakeObj("ns", "cached", "", "new"))), "new");
  EXPECT_EQ(Payload(fifo.ReuseUnchanged(MakeObj("ns", "unknown", "5", "new"))), "new");

  // A queued change is newer than the known object: it is what counts.
  api::ObjectPtr queued = MakeObj("ns", "cached", "7", "queued");
  ASSERT_TRUE(fifo.Update(queued).ok());
  EXPECT_EQ(fifo.ReuseUnchanged(MakeObj("ns", "cached", "7", "new")), queued);
  EXPECT_EQ(Payload(fifo.ReuseUnchanged(MakeObj("ns", "cached", "5", "new"))), "new");
  // Never a deleted object.
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "cached", "7", "deleted")).ok());
  EXPECT_EQ(Payload(fifo.ReuseUnchanged(MakeObj("ns", "cached", "7", "new"))), "new");

  // With a transform the held objects are transformed and the new one is not yet: no reuse.
  DeltaFIFO transformed(
      {.known_objects = known,
       .transform = [](api::ObjectPtr obj) -> Result<api::ObjectPtr> { return obj; }});
  EXPECT_EQ(Payload(transformed.ReuseUnchanged(MakeObj("ns", "cached", "5", "new"))), "new");
}

// 3.8
TEST(DeltaFIFOTest, TransformPrunesQueuedObjectsButNotTombstonesOrSync) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "cached", "1", "cached-payload")).ok());
  std::atomic<int> calls{0};
  DeltaFIFO fifo(
      {.known_objects = known, .transform = [&](api::ObjectPtr obj) -> Result<api::ObjectPtr> {
         ++calls;
         EXPECT_EQ(AsTombstone(*obj), nullptr);
         return MakeObj(obj->Meta().namespace_, obj->Meta().name, obj->Meta().resource_version,
                        "pruned");
       }});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1", "full")).ok());
  EXPECT_EQ(Payload(fifo.GetByKey("ns/a")[0].object), "pruned");
  ASSERT_TRUE(fifo.Resync().ok());
  EXPECT_EQ(Payload(fifo.GetByKey("ns/cached")[0].object), "cached-payload");
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "b", "2", "full")}, "2").ok());
  EXPECT_EQ(Payload(fifo.GetByKey("ns/b")[0].object), "pruned");
  // "ns/a" and "ns/cached" vanished: their tombstones reach the queue untouched.
  const auto* tombstone = AsTombstone(*fifo.GetByKey("ns/cached").back().object);
  ASSERT_NE(tombstone, nullptr);
  EXPECT_EQ(Payload(tombstone->Obj()), "cached-payload");
  EXPECT_EQ(calls.load(), 2);

  DeltaFIFO failing({.transform = [](api::ObjectPtr) -> Result<api::ObjectPtr> {
    return Error::Local("TransformFailed", "no");
  }});
  EXPECT_FALSE(failing.Add(MakeObj("ns", "a")).ok());
  EXPECT_EQ(failing.Len(), 0u);
}

}  // namespace
}  // namespace kcm::cache
