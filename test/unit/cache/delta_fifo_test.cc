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

namespace kcm::cache {
namespace {

using ::kcm::mocks::MakeObj;
using ::kcm::mocks::Payload;
using ::testing::ElementsAre;

struct Popped {
  std::string key;
  Deltas deltas;
  bool is_in_initial_list = false;
};

Popped PopOne(DeltaFIFO& fifo) {
  Popped out;
  Status s = fifo.Pop([&](const Deltas& deltas, bool initial) {
    out.key = fifo.KeyOf(*deltas.back().object);
    out.deltas = deltas;
    out.is_in_initial_list = initial;
    return OkStatus();
  });
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  return out;
}

std::vector<DeltaType> Types(const Deltas& deltas) {
  std::vector<DeltaType> out;
  for (const Delta& d : deltas) out.push_back(d.type);
  return out;
}

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

// client-go Store.LastStoreSyncResourceVersion (AtomicFIFO): how far the consumer has applied the
// stream. Our FIFO merges the deltas of a key, so "a" queued first and updated last is applied
// before "b"'s older event: the watermark must not pass b's RV until b was popped.
TEST(DeltaFIFOTest, LastStoreSyncResourceVersionNeverPassesAnUnappliedEvent) {
  DeltaFIFO fifo({});
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "11")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "12")).ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");  // nothing applied yet

  EXPECT_EQ(PopOne(fifo).key, "ns/a");  // a@10 and a@12 applied, b@11 still queued
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");
  EXPECT_EQ(PopOne(fifo).key, "ns/b");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "12");
}

TEST(DeltaFIFOTest, LastStoreSyncResourceVersionCountsAListOnceAllOfItIsApplied) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "3"), MakeObj("ns", "b", "5")}, "7").ok());
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "7");
  // An empty list is applied at once.
  ASSERT_TRUE(fifo.Replace({}, "9").ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "9");
}

// Each queued key records the pushes its deltas belong to in its own entry (no side maps): a key
// carrying deltas of several pushes holds each of them back until it is popped, a list naming a
// key twice counts it once (HasSynced after one pop of it), and a key listed again is not taken
// for a vanished one.
TEST(DeltaFIFOTest, PushesHeldBackByEveryKeyCarryingThem) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "gone", "11")).ok());
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "b", "12", "b1"), MakeObj("ns", "a", "12"),
                            MakeObj("ns", "b", "12", "b2")},
                           "20")
                  .ok());
  // a: Added@10 + Replaced@20; gone: Added@11 + its tombstone@20; b: Replaced twice, one key.
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/gone", "ns/b"));
  Popped a = PopOne(fifo);
  EXPECT_THAT(Types(a.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kReplaced));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");  // gone@11 and the list still queued
  Popped gone = PopOne(fifo);
  EXPECT_THAT(Types(gone.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kDeleted));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "11");  // b of the list still queued
  Popped b = PopOne(fifo);
  EXPECT_THAT(Types(b.deltas), ElementsAre(DeltaType::kReplaced, DeltaType::kReplaced));
  EXPECT_EQ(Payload(b.deltas[1].object), "b2");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "20");
  EXPECT_EQ(fifo.Len(), 0u);

  // The first list: synced once each distinct key is popped (b counted once).
  DeltaFIFO first({});
  ASSERT_TRUE(
      first
          .Replace({MakeObj("ns", "b", "1"), MakeObj("ns", "c", "1"), MakeObj("ns", "b", "1")}, "5")
          .ok());
  EXPECT_EQ(PopOne(first).key, "ns/b");
  EXPECT_FALSE(first.HasSynced());
  EXPECT_EQ(PopOne(first).key, "ns/c");
  EXPECT_TRUE(first.HasSynced());
  EXPECT_EQ(first.LastStoreSyncResourceVersion(), "5");
}

TEST(DeltaFIFOTest, BookmarkAdvancesOnlyPastWhatWasApplied) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "20")).ok());
  fifo.Bookmark("25");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "");  // a@20 still queued
  PopOne(fifo);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "25");
  fifo.Bookmark("30");  // nothing queued: at once
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "30");
  // A deletion of a key neither queued nor known is dropped, and counts as applied.
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "gone", "31")).ok());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "31");
}

// A drained queue frees the maps a big list grew (Pop): the queue behaves the same afterwards —
// keys queued once in order, deltas merged, the watermark and HasSynced intact.
TEST(DeltaFIFOTest, QueueWorksAfterABigListIsDrained) {
  DeltaFIFO fifo({});
  std::vector<api::ObjectPtr> items;
  for (int i = 0; i < 5000; ++i) items.push_back(MakeObj("ns", "p" + std::to_string(i), "3"));
  ASSERT_TRUE(fifo.Replace(std::move(items), "10").ok());
  for (int i = 0; i < 5000; ++i) PopOne(fifo);
  EXPECT_TRUE(fifo.HasSynced());
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");
  EXPECT_EQ(fifo.Len(), 0u);

  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "11", "a1")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "12")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "13", "a2")).ok());
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/b"));
  EXPECT_EQ(fifo.GetByKey("ns/a").size(), 2u);
  Popped a = PopOne(fifo);
  EXPECT_EQ(a.key, "ns/a");
  EXPECT_THAT(Types(a.deltas), ElementsAre(DeltaType::kAdded, DeltaType::kUpdated));
  EXPECT_EQ(Payload(a.deltas[1].object), "a2");
  EXPECT_FALSE(a.is_in_initial_list);
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "11");  // b@12 still queued
  EXPECT_EQ(PopOne(fifo).key, "ns/b");
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "13");
}

// on_store_sync_advanced: called (without the lock: it may read the watermark) each time the
// watermark moves, from whichever call moved it, and not when it stays.
TEST(DeltaFIFOTest, StoreSyncListenerHearsEveryMoveOfTheWatermark) {
  std::vector<std::string> heard;
  DeltaFIFO* self = nullptr;
  DeltaFIFO fifo(
      {.on_store_sync_advanced = [&] { heard.push_back(self->LastStoreSyncResourceVersion()); }});
  self = &fifo;
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "b", "11")).ok());
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "a", "12")).ok());
  fifo.Bookmark("13");  // behind queued events: no move
  EXPECT_THAT(heard, ElementsAre());
  PopOne(fifo);         // a: the watermark stops before b@11
  PopOne(fifo);         // b: everything, up to the bookmark
  fifo.Bookmark("13");  // same RV again: no move
  ASSERT_TRUE(fifo.Delete(MakeObj("ns", "gone", "14")).ok());
  ASSERT_TRUE(fifo.Replace({}, "15").ok());
  EXPECT_THAT(heard, ElementsAre("10", "13", "14", "15"));
}

// Pop's after_applied runs after process (before HasSynced turns true), also when process failed.
TEST(DeltaFIFOTest, AfterAppliedRunsAfterProcessEvenOnError) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "10")).ok());
  std::vector<std::string> order;
  Status s = fifo.Pop(
      [&](const Deltas&, bool) {
        order.push_back("process");
        return Error::Local("Failed", "no");
      },
      [&] { order.push_back("after_applied"); });
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(order, ElementsAre("process", "after_applied"));
  EXPECT_EQ(fifo.LastStoreSyncResourceVersion(), "10");  // dropped, as applied
}

// after_applied runs without the queue lock, so what it calls (an informer's non-blocking event
// handlers) can read the watermark, HasSynced and the queue: the watermark already counts the
// popped item, while HasSynced stays false until after_applied of the last initial item has
// returned (whoever hands out notifications there has handed out all of them first). Under the
// queue lock these reads would deadlock.
TEST(DeltaFIFOTest, AfterAppliedRunsWithoutTheLockBeforeHasSyncedTurnsTrue) {
  DeltaFIFO fifo({});
  ASSERT_TRUE(fifo.Replace({MakeObj("ns", "a", "1"), MakeObj("ns", "b", "2")}, "7").ok());
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "c", "9")).ok());
  std::vector<std::string> seen;
  auto pop = [&] {
    std::string key;
    Status s = fifo.Pop(
        [&](const Deltas& deltas, bool initial) {
          key = fifo.KeyOf(*deltas.back().object) + (initial ? " initial" : "");
          return OkStatus();
        },
        [&] {
          seen.push_back(key + " rv=" + fifo.LastStoreSyncResourceVersion() + " synced=" +
                         (fifo.HasSynced() ? "1" : "0") + " queued=" + std::to_string(fifo.Len()));
        });
    ASSERT_TRUE(s.ok());
    seen.push_back("after pop synced=" + std::string(fifo.HasSynced() ? "1" : "0"));
  };
  pop();
  pop();
  pop();
  EXPECT_THAT(seen, ElementsAre("ns/a initial rv= synced=0 queued=2", "after pop synced=0",
                                "ns/b initial rv=7 synced=0 queued=1", "after pop synced=1",
                                "ns/c rv=9 synced=1 queued=0", "after pop synced=1"));
}

// A sole consumer can wait for an item without holding its own lock, then Pop under it.
TEST(DeltaFIFOTest, WaitForItemWaitsForAKeyAndReportsClose) {
  DeltaFIFO fifo({});
  std::atomic<bool> woke{false};
  std::jthread waiter([&] {
    EXPECT_TRUE(fifo.WaitForItem());
    woke = true;
  });
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1")).ok());
  waiter.join();
  EXPECT_TRUE(woke);
  EXPECT_EQ(fifo.Len(), 1u) << "nothing popped";
  EXPECT_TRUE(fifo.WaitForItem());
  fifo.Close();
  EXPECT_FALSE(fifo.WaitForItem()) << "closed, even with a key queued";
}

// The timed wait of an informer with compactions pending: it returns at the deadline with nothing
// queued, at once when a key is (or comes), and false once closed.
TEST(DeltaFIFOTest, WaitForItemForReturnsAtItsDeadlineOrWithAKey) {
  DeltaFIFO fifo({});
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::milliseconds(20)));
  EXPECT_FALSE(fifo.IsClosed());
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::steady_clock::duration::zero()));
  std::jthread waiter([&] { EXPECT_TRUE(fifo.WaitForItemFor(std::chrono::minutes(5))); });
  ASSERT_TRUE(fifo.Add(MakeObj("ns", "a", "1")).ok());
  waiter.join();
  EXPECT_TRUE(fifo.WaitForItemFor(std::chrono::steady_clock::duration::zero()));
  fifo.Close();
  EXPECT_FALSE(fifo.WaitForItemFor(std::chrono::minutes(5))) << "closed, even with a key queued";
  EXPECT_TRUE(fifo.IsClosed());
}

// A watch event's push signals the consumer only when it is blocked: a consumer that alternates
// between applying and blocking must still be woken for every push (no lost wake-up). 20,000
// pushes from a producer against a consumer that waits in WaitForItem and in Pop in turn; every
// key arrives, and the last one arrives while the consumer is blocked.
TEST(DeltaFIFOTest, ConsumerBlockedBetweenPushesIsWokenForEachOne) {
  DeltaFIFO fifo({});
  constexpr int kPushes = 20000;
  std::atomic<int> applied{0};
  std::jthread consumer([&] {
    for (int i = 0;; ++i) {
      if (i % 2 == 0 && !fifo.WaitForItem()) return;
      Status s = fifo.Pop([&](const Deltas& deltas, bool) {
        applied += static_cast<int>(deltas.size());
        return OkStatus();
      });
      if (!s.ok()) return;
    }
  });
  for (int i = 0; i < kPushes; ++i) {
    const std::string name = "o" + std::to_string(i);
    ASSERT_TRUE(fifo.Add(MakeObj("ns", name, "1")).ok());
    if (i % 3 == 0) std::this_thread::yield();
  }
  // Liveness bound: an implementation that loses a wake-up leaves the consumer blocked with
  // items queued.
  for (int i = 0; i < 1000 && applied.load() < kPushes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), kPushes);
  // The consumer is (or soon is) blocked on an empty queue: one more push of each kind wakes it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fifo.Update(MakeObj("ns", "o1", "2")).ok());
  for (int i = 0; i < 500 && applied.load() < kPushes + 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), kPushes + 1);
  fifo.Close();
}

api::WatchEvent Event(api::WatchEventType type, api::ObjectPtr obj) {
  api::WatchEvent e;
  e.type = type;
  e.object = std::move(obj);
  return e;
}

// Everything a queue shows of what it holds: each key popped in order with its delta types and
// payloads, and the watermark after each pop.
std::vector<std::string> DrainDescribed(DeltaFIFO& fifo) {
  std::vector<std::string> out;
  while (fifo.Len() > 0) {
    Popped p = PopOne(fifo);
    std::string line = p.key + ":";
    for (const Delta& d : p.deltas) {
      line += " " + std::string(DeltaTypeName(d.type)) + "/" +
              (AsTombstone(*d.object) ? "tombstone" : Payload(d.object));
    }
    out.push_back(line + " rv=" + fifo.LastStoreSyncResourceVersion());
  }
  return out;
}

// A read's events handed over at once queue exactly what Add, Update and Delete one by one queue:
// the same keys in the same order, the same deltas, the same watermark after each pop; a
// deletion of an unknown key is dropped and moves the watermark, a queued one is kept.
TEST(DeltaFIFOTest, WatchEventsOfOneReadQueueAsSeparatePushes) {
  auto known = NewIndexer(MetaNamespaceKeyFunc, {});
  ASSERT_TRUE(known->Add(MakeObj("ns", "known", "1")).ok());
  DeltaFIFO one_by_one({.known_objects = known});
  DeltaFIFO batched({.known_objects = known});
  ASSERT_TRUE(one_by_one.Add(MakeObj("ns", "old", "2", "old2")).ok());
  ASSERT_TRUE(batched.Add(MakeObj("ns", "old", "2", "old2")).ok());

  ASSERT_TRUE(one_by_one.Add(MakeObj("ns", "a", "3", "a3")).ok());
  ASSERT_TRUE(one_by_one.Update(MakeObj("ns", "old", "4", "old4")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "ghost", "5")).ok());
  ASSERT_TRUE(one_by_one.Update(MakeObj("ns", "a", "6", "a6")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "known", "7", "gone")).ok());
  ASSERT_TRUE(one_by_one.Delete(MakeObj("ns", "a", "8", "a8")).ok());

  std::vector<api::WatchEvent> read;
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "a", "3", "a3")));
  read.push_back(Event(api::WatchEventType::kModified, MakeObj("ns", "old", "4", "old4")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "ghost", "5")));
  read.push_back(Event(api::WatchEventType::kModified, MakeObj("ns", "a", "6", "a6")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "known", "7", "gone")));
  read.push_back(Event(api::WatchEventType::kDeleted, MakeObj("ns", "a", "8", "a8")));
  ASSERT_TRUE(batched.AddWatchEvents(read).ok());

  EXPECT_EQ(batched.ListKeys(), one_by_one.ListKeys());
  const std::vector<std::string> want = DrainDescribed(one_by_one);
  EXPECT_EQ(DrainDescribed(batched), want);
  // The watermark stops short of the oldest push still queued: a3 after "old", known's 7 after "a".
  EXPECT_THAT(want, ElementsAre("ns/old: Added/old2 Updated/old4 rv=2",
                                "ns/a: Added/a3 Updated/a6 Deleted/a8 rv=6",
                                "ns/known: Deleted/gone rv=8"));
}

// A bookmark or an event without an object is not queued (the first failure is returned), and the
// events around it are, in order.
TEST(DeltaFIFOTest, WatchEventsRefuseWhatIsNotAnObjectChange) {
  DeltaFIFO fifo({});
  std::vector<api::WatchEvent> read;
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "a", "1")));
  read.push_back(Event(api::WatchEventType::kBookmark, MakeObj("", "", "2")));
  read.push_back(Event(api::WatchEventType::kModified, nullptr));
  read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "b", "3")));
  Status s = fifo.AddWatchEvents(read);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().reason, "InvalidWatchEvent");
  EXPECT_THAT(fifo.ListKeys(), ElementsAre("ns/a", "ns/b"));
}

// A consumer blocked on an empty queue is woken by a read's events once and finds every one of
// them queued (pushed one by one, it could wake after the first and find one key); across many
// reads against a consumer that applies as they come, none is lost.
TEST(DeltaFIFOTest, ConsumerWokenOnceFindsTheWholeRead) {
  DeltaFIFO fifo({});
  std::atomic<std::size_t> seen_on_wake{0};
  std::atomic<bool> woke{false};
  std::jthread first([&] {
    if (!fifo.WaitForItem()) return;
    seen_on_wake = fifo.Len();
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it block
  std::vector<api::WatchEvent> read;
  for (int i = 0; i < 50; ++i) {
    read.push_back(Event(api::WatchEventType::kAdded, MakeObj("ns", "o" + std::to_string(i))));
  }
  ASSERT_TRUE(fifo.AddWatchEvents(read).ok());
  first.join();
  ASSERT_TRUE(woke.load());
  EXPECT_EQ(seen_on_wake.load(), 50u);
  while (fifo.Len() > 0) PopOne(fifo);

  constexpr int kReads = 2000;
  std::atomic<int> applied{0};
  std::jthread consumer([&] {
    while (fifo.WaitForItem()) {
      Status s = fifo.Pop([&](const Deltas& deltas, bool) {
        applied += static_cast<int>(deltas.size());
        return OkStatus();
      });
      if (!s.ok()) return;
    }
  });
  for (int r = 0; r < kReads; ++r) {
    std::vector<api::WatchEvent> events;
    for (int i = 0; i < 1 + r % 4; ++i) {
      events.push_back(Event(api::WatchEventType::kModified,
                             MakeObj("ns", "k" + std::to_string(r) + "-" + std::to_string(i))));
    }
    ASSERT_TRUE(fifo.AddWatchEvents(events).ok());
    if (r % 3 == 0) std::this_thread::yield();
  }
  const int want = kReads / 4 * (1 + 2 + 3 + 4);
  for (int i = 0; i < 1000 && applied.load() < want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(applied.load(), want);
  fifo.Close();
}

}  // namespace
}  // namespace kcm::cache
