// DeltaFIFO: a queue of keys, each with the ordered list of changes (Deltas) seen for it since it
// was last popped; the producer is a Reflector, the consumer an informer's processing loop
// (behaviour 3). All methods are safe for concurrent use; Pop runs the process function under the
// queue lock and its after_applied function without it.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/api/watch_event.h"
#include "pkg/cache/keys.h"
#include "pkg/cache/store.h"
#include "pkg/util/futex_condition.h"
#include "pkg/util/result.h"

namespace kcm::cache {

enum class DeltaType { kAdded, kUpdated, kDeleted, kReplaced, kSync };

std::string_view DeltaTypeName(DeltaType type);

// One change. For kDeleted, object may be a DeletedFinalStateUnknown tombstone (see keys.h).
struct Delta {
  DeltaType type;
  api::ObjectPtr object;
};

// The changes for one key, oldest first. Polymorphic-allocator vector: the queue allocates its own
// from its pool (DeltaFIFO::pool_); a copy (GetByKey, a handler's) uses the default heap.
using Deltas = std::pmr::vector<Delta>;

// Prunes or converts an object before it is queued. Never called for tombstones or Sync deltas.
using TransformFunc = std::function<Result<api::ObjectPtr>(api::ObjectPtr)>;

// Called by Pop with every delta of one key. is_in_initial_list: the key belonged to the first
// Replace and HasSynced was still false when it was popped (behaviour 3.5).
using PopProcessFunc = std::function<Status(const Deltas& deltas, bool is_in_initial_list)>;

struct DeltaFIFOOptions {
  // Defaults to MetaNamespaceKeyFunc; tombstones always key by their stored key.
  KeyFunc key_func;
  // The informer's indexer: what the consumer already knows (behaviour 3.3, 3.4, 3.6). May be null.
  std::shared_ptr<const KeyListerGetter> known_objects;
  TransformFunc transform;
  // Called each time LastStoreSyncResourceVersion has moved on, without the queue lock, from the
  // thread that moved it (Pop's; the producer's for a deletion of an unknown key, an empty list
  // or a bookmark). Calls may overlap and need not come in order: read the watermark, not a
  // value passed along. For waiters on "the cache has applied resourceVersion r".
  std::function<void()> on_store_sync_advanced;
};

class DeltaFIFO final : public ReflectorStore {
 public:
  explicit DeltaFIFO(DeltaFIFOOptions options);

  Status Add(api::ObjectPtr obj) override;
  Status Update(api::ObjectPtr obj) override;
  // Dropped when the key is neither queued nor known (behaviour 3.3).
  Status Delete(api::ObjectPtr obj) override;
  // Replaced for every item; tombstones for keys queued or known but not listed (behaviour 3.4).
  Status Replace(std::vector<api::ObjectPtr> items, const std::string& resource_version) override;
  // Sync for each known key that has nothing queued (behaviour 3.6).
  Status Resync() override;
  // The stream is complete up to resource_version: once everything queued before it has been
  // popped, LastStoreSyncResourceVersion reports it.
  void Bookmark(const std::string& resource_version) override;
  // The newest queued (not deleted) object of obj's key, else the known object, when it is the
  // same write as obj. Not with a transform: the held object is transformed, obj is not yet.
  api::ObjectPtr ReuseUnchanged(api::ObjectPtr obj) const override;

  // The first list, queued while it arrives (client-go queues it whole, by Replace, once it has
  // come). Taken only while nothing was ever queued or known, so that no key can have vanished:
  // the list's Replace would queue a Replaced delta per item and nothing else, which is what
  // AddListItems does batch by batch, so the consumer applies the list while the rest is still on
  // the wire. HasSynced stays false until EndList and until every item is popped; the list's
  // resourceVersion counts (LastStoreSyncResourceVersion) only then. After AbortList the items
  // already queued or applied stay (a prefix of one snapshot, seen as the initial list is seen
  // before HasSynced anyway) and HasSynced stays false; the next list is not taken this way but by
  // Replace, which tombstones whatever of them it does not list (docs/design/
  // list-streaming.md, "Initial list as it arrives").
  bool BeginList() override;
  Status AddListItems(std::vector<api::ObjectPtr>& items) override;
  Status EndList(std::vector<api::ObjectPtr>& items, const std::string& resource_version) override;
  void AbortList() override;

  // The resourceVersion up to which the consumer has applied the stream (client-go's
  // Store.LastStoreSyncResourceVersion with AtomicFIFO): the RV of the latest event, list or
  // bookmark such that it and everything queued before it have been popped and processed. "" until
  // the first. Deltas of one key are merged in the queue, so a later event of a key queued early
  // can be applied before an earlier event of another key; this watermark never runs ahead of
  // such a gap, which is what lets a controller trust "my write at RV r is in the cache once this
  // is >= r".
  std::string LastStoreSyncResourceVersion() const;

  // Blocks until a key is queued or the queue is closed, removes the key and runs process with its
  // deltas while holding the queue lock (Delete and Replace ask known_objects whether a key is
  // known: the popped key must be in the consumer's cache before they can look again). Returns
  // process's status (the deltas are not requeued on error, as upstream no longer does), or an
  // error with reason "FIFOClosed" once closed and empty.
  Status Pop(const PopProcessFunc& process);
  // Pop, then `after_applied` (also when process failed) once LastStoreSyncResourceVersion counts
  // the popped deltas as applied, WITHOUT the queue lock: it may read the watermark, HasSynced
  // and the queue. The informer applies the deltas to its indexer in `process` and hands the
  // notifications to its handlers in `after_applied`: a handler that reacts to an event then never
  // reads a watermark older than the event, as with client-go, whose store takes the event's
  // resourceVersion before its handlers are called. (The watermark can still stop short of the
  // event when an older event of another key is queued: it never passes a gap.) HasSynced stays
  // false until after_applied has returned for the last initial item, so that whoever hands out
  // notifications there has handed out every initial one before anyone sees the queue synced.
  Status Pop(const PopProcessFunc& process, const std::function<void()>& after_applied);
  // Blocks until a key is queued (true) or the queue is closed (false, even with keys queued: a
  // stopping consumer leaves them); pops nothing.
  // For a sole consumer that must take a lock of its own before Pop without holding it while
  // the queue is empty.
  bool WaitForItem() const;
  // As WaitForItem, for at most `timeout`: true when a key is queued, false when the queue is
  // closed or the time has passed (IsClosed tells which).
  bool WaitForItemFor(std::chrono::steady_clock::duration timeout) const;
  // Wakes every Pop; queued items are still handed out, then Pop reports FIFOClosed.
  void Close();
  bool IsClosed() const;

  // True once the first Replace's items (and its tombstones) were all popped and processed (their
  // after_applied returned), or once an Add/Update/Delete came before any Replace (behaviour 3.5).
  bool HasSynced() const;

  std::vector<std::string> ListKeys() const;
  // The deltas queued for key (empty if none).
  Deltas GetByKey(const std::string& key) const;
  size_t Len() const;
  std::string KeyOf(const api::Object& obj) const;

 private:
  // Signals one consumer blocked in cv_ if anything is queued, after releasing `lock` (a watch
  // event's push).
  void WakeConsumerAndUnlock(std::unique_lock<std::mutex>& lock);
  // One watch event's push (Add, Update, Delete, AddWatchEvents): an Added or Updated delta,
  // its own push and resourceVersion mark.
  Status PushLocked(DeltaType type, api::ObjectPtr obj);
  // A deletion of key: dropped when the key is neither queued nor known (behaviour 3.3), which
  // moves the watermark at once (*advanced set when it moved; NotifyAdvanced after unlocking).
  Status PushDeleteLocked(const std::string& key, api::ObjectPtr obj, bool* advanced);
  // Blocks until the queue holds an item or is closed.
  void WaitLocked(std::unique_lock<std::mutex>& lock) const;
  // seq: the push the delta belongs to (see marks_); nullopt for Sync deltas, which carry nothing
  // new.
  // first_of_seq (may be null) is set when seq is new to the key's entry. Does not wake Pop: the
  // caller notifies cv_ once it has queued what it queues.
  Status QueueActionLocked(DeltaType type, api::ObjectPtr obj, std::optional<uint64_t> seq,
                           bool* first_of_seq = nullptr);
  bool HasSyncedLocked() const;
  // Every initial item has been popped (some may still be in after_applied).
  bool InitialListPoppedLocked() const;
  // A new push with resourceVersion rv ("" = unknown, not a mark).
  uint64_t NewMarkLocked(const std::string& rv);
  // Moves applied_rv_ to the newest mark older than every pending push; true if it changed.
  bool AdvanceLocked();
  // Calls options_.on_store_sync_advanced, if set; never with mu_ held.
  void NotifyAdvanced() const;
  // Queues items (cleared) as Replaced deltas of the list being taken.
  Status QueueListItemsLocked(std::vector<api::ObjectPtr>& items);
  // Frees the maps and pool of a big queue that has drained (see Pop); true if it did.
  bool ReleaseIfDrainedLocked();

  // What one queued key carries: its deltas and the pushes they belong to. One entry per key in
  // a single map (the queue points at its key), so a list of 50,000 items costs one map node, one
  // key text and one delta buffer per item while it is queued — it was six allocations and two
  // more copies of the key (≈ 560 B per item), and since the indexer's nodes are allocated while
  // the queue drains, into the chunks it frees, most of that stayed resident as holes between them
  // (docs/design/cache-memory.md). A relist queues every cached key at once on top of the
  // cache, so the node is kept to 80 bytes: the key is a view of its text in the pool (a
  // std::pmr::string would add its allocator and capacity) and the pushes are one inline number.
  struct Entry {
    using allocator_type = std::pmr::polymorphic_allocator<>;
    static constexpr uint64_t kNoSeq = ~uint64_t{0};
    explicit Entry(const allocator_type& alloc) : deltas(alloc) {}
    Entry(Entry&& other, const allocator_type& alloc)
        : deltas(std::move(other.deltas), alloc),
          first_seq(other.first_seq),
          more_seqs(std::move(other.more_seqs)) {}

    Deltas deltas;
    // The pushes (sequence numbers) whose deltas this key holds: nearly always one, kept inline;
    // kNoSeq when none (only Sync deltas). The rare others (a key changed again while queued) on
    // the heap.
    uint64_t first_seq = kNoSeq;
    std::unique_ptr<std::vector<uint64_t>> more_seqs;
    bool HasSeq(uint64_t seq) const {
      return first_seq == seq || (more_seqs && std::find(more_seqs->begin(), more_seqs->end(),
                                                         seq) != more_seqs->end());
    }
    void AddSeq(uint64_t seq) {
      if (first_seq == kNoSeq) {
        first_seq = seq;
        return;
      }
      if (!more_seqs) more_seqs = std::make_unique<std::vector<uint64_t>>();
      more_seqs->push_back(seq);
    }
    template <typename F>
    void ForEachSeq(F&& f) const {
      if (first_seq == kNoSeq) return;
      f(first_seq);
      if (more_seqs) {
        for (uint64_t seq : *more_seqs) f(seq);
      }
    }
  };
  // With the node's link, key view and cached hash: 80 bytes, one pool size class (see above).
  static_assert(sizeof(void*) != 8 || sizeof(Entry) <= 48, "DeltaFIFO::Entry grew");
  // Looks keys up by text without making a key string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  // The text of a queued key, in pool_ (exactly its length; freed by FreeKeyText).
  std::string_view CopyKeyText(std::string_view key);
  void FreeKeyText(std::string_view key);

  const DeltaFIFOOptions options_;
  mutable std::mutex mu_;
  // Consumers (Pop, WaitForItem) sleep here; it makes a system call only when one sleeps, so the
  // reflector's signal for a consumer busy applying earlier items costs none.
  mutable FutexCondition cv_;
  // What items_ allocates (nodes, keys, delta buffers) comes from this pool, released whole when
  // a big queue drains (Pop): the queue's bookkeeping of an initial list is freed at once instead
  // of leaving holes among the indexer's nodes, which are allocated while it drains.
  std::pmr::unsynchronized_pool_resource pool_;
  // Node-based: a key's address is stable from insertion to extraction, which queue_ relies on.
  // Each key views its text in pool_ (CopyKeyText), freed when Pop takes the node.
  std::pmr::unordered_map<std::string_view, Entry, KeyHash, KeyEq> items_{&pool_};
  // Each queued key once, in first-queued order: the address of its key in items_ (every queued
  // key has an entry there until Pop takes both).
  std::deque<const std::string_view*> queue_;
  bool populated_ = false;
  size_t initial_population_count_ = 0;
  // Initial items popped whose after_applied has not returned yet.
  size_t initial_in_flight_ = 0;
  bool closed_ = false;
  // The push of the list being taken by AddListItems (BeginList .. EndList/AbortList).
  std::optional<uint64_t> list_seq_;
  // Some list was taken in part and aborted: later lists go to Replace.
  bool list_taken_in_part_ = false;

  // Watermark bookkeeping: each Add/Update/Delete/Replace/Bookmark is a push with a sequence
  // number; marks_ holds the RVs of pushes not yet folded into applied_rv_, pending_ counts, per
  // push, the queued keys still carrying its deltas (each entry's seqs say which).
  uint64_t next_seq_ = 0;
  std::map<uint64_t, std::string> marks_;
  std::map<uint64_t, size_t> pending_;
  std::string applied_rv_;

 public:
  // The watch events of one read (Added, Modified, Deleted; anything else is refused): each
  // queued as Add, Update or Delete queues it, in order, one push and resourceVersion mark each,
  // but under one lock, and a consumer blocked in Pop or WaitForItem is woken once, after the
  // last. A Reflector hands over the frames of one read this way (WatchStream::buffered_frames):
  // the informer wakes once per read instead of once per event, and finds the whole read queued.
  // The objects are moved from. Returns the first event's failure, if any; the others are queued
  // all the same, as separate calls would have queued them.
  Status AddWatchEvents(std::vector<api::WatchEvent>& events) override;
};

}  // namespace kcm::cache
