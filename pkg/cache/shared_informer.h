// SharedIndexInformer: one Reflector → DeltaFIFO → Indexer pipeline per resource, shared by any
// number of event handlers (behaviour 4). All methods are safe for concurrent use; Run is called
// once and blocks until its stop token is set.
//
// An informer made without a ListerWatcher has sources instead (docs/design/sharding.md,
// "Serving a share"): each source added at run time is a Reflector and a DeltaFIFO of
// its own that feeds the one indexer with the keys its filter admits, and is removed with the
// delete of each of its objects.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/cache/delta_fifo.h"
#include "pkg/cache/indexer.h"
#include "pkg/cache/listwatch.h"
#include "pkg/cache/reflector.h"
#include "pkg/cache/resource_event_handler.h"
#include "pkg/cache/shared_processor.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::cache {

// Handlers may not ask to resync more often than this (behaviour 4.4).
inline constexpr Clock::duration kMinimumResyncPeriod = std::chrono::seconds(1);

struct SharedIndexInformerOptions {
  // For logs, e.g. "ReplicaSet".
  std::string name = "informer";
  // Watch events of another kind are skipped (see ReflectorOptions::expected_kind).
  std::string expected_kind;
  // The default handler resync period and the initial resync check period (0 = never).
  Clock::duration resync_period{0};
  Indexers indexers;
  bool use_watch_list = false;
  // Defaults to RealClock::Get().
  Clock* clock = nullptr;
  // Defaults to NewRandFunc(); tests make watch timeouts and backoff jitter deterministic.
  RandFunc rand;
  // Called on the informer's thread, with the delta lock held, for an object that a watch event
  // or a list stored and that stayed unchanged in the store for `compact_after`: returns an equal
  // copy that costs less memory, stored in its place without a notification (same
  // resourceVersion, same fields), or null to keep the object. The factory sets it for the kinds
  // whose kept raw JSON is packed (api::Codec::pack_kept_text) and has their watch decoder keep
  // the text plain, so that objects changing during a rollout are not deflated and inflated on
  // every update (docs/design/compact-raw-json.md).
  std::function<api::ObjectPtr(const api::Object&)> compact;
  // Whether `compact` may have a copy for this object (a cheap test: the factory's says whether
  // its text is still plain); an object for which it is false is not kept for compaction at all,
  // so that a list of objects decoded packed costs no entries. Unset: every object is.
  std::function<bool(const api::Object&)> compactable;
  Clock::duration compact_after = std::chrono::seconds(10);
};

// Which keys ("namespace/name", or "name" for a cluster-scoped object) a source lists and watches.
using SourceFilter = std::function<bool(std::string_view key)>;

class SharedIndexInformer {
 public:
  // With a null `lister_watcher` the informer has no objects of its own: AddSource gives it some.
  SharedIndexInformer(std::shared_ptr<ListerWatcher> lister_watcher,
                      SharedIndexInformerOptions options);
  ~SharedIndexInformer();
  SharedIndexInformer(const SharedIndexInformer&) = delete;
  SharedIndexInformer& operator=(const SharedIndexInformer&) = delete;

  // Registers a handler with the informer's default resync period. After start the handler first
  // receives every cached object as an Add with is_in_initial_list=true (behaviour 4.5). Error once
  // the informer has stopped. A handler whose NonBlocking() is true is called on the informer's
  // own thread (the replay: on the caller's), with the informer's delta lock held: it may read
  // the cache, HasSynced and LastStoreSyncResourceVersion, but must not add or remove handlers of
  // this informer (that would deadlock) nor wait for anything.
  Result<std::shared_ptr<ResourceEventHandlerRegistration>> AddEventHandler(
      std::shared_ptr<ResourceEventHandler> handler);
  Result<std::shared_ptr<ResourceEventHandlerRegistration>> AddEventHandler(
      ResourceEventHandlerFuncs funcs);
  // resync_period: at least kMinimumResyncPeriod; before start a smaller period lowers the
  // informer's check period, after start it is raised to the check period (behaviour 4.4).
  Result<std::shared_ptr<ResourceEventHandlerRegistration>> AddEventHandlerWithResyncPeriod(
      std::shared_ptr<ResourceEventHandler> handler, Clock::duration resync_period);
  Status RemoveEventHandler(const std::shared_ptr<ResourceEventHandlerRegistration>& registration);

  // Both must be called before Run (behaviour 4.6).
  Status SetTransform(TransformFunc transform);
  Status AddIndexers(const Indexers& indexers);

  // Runs the reflector, the processing loop and the listeners until stop is requested; returns
  // after every thread it started has been joined. Without a ListerWatcher: runs the sources'
  // resync timer and stops the sources at the end.
  void Run(std::stop_token stop);

  // Informers made without a ListerWatcher only; before or after Run (not once stopped). The
  // source lists and watches through `lister_watcher`, which must answer only keys `owns` admits
  // (informers::ShardedListerWatcher drops what a server answered beyond its shard), on a
  // reflector thread and a processing thread of its own; its relists delete only what it owns.
  // Sources own disjoint keys. Error when `name` is taken.
  Status AddSource(const std::string& name, std::shared_ptr<ListerWatcher> lister_watcher,
                   SourceFilter owns);
  // Stops the source and joins its threads, then deletes each object it owns from the indexer
  // and tells the handlers (OnDelete with the last state), so that nothing of it is left behind.
  // Error when there is no such source.
  Status RemoveSource(const std::string& name);

  // True once the first list has been fully delivered to the indexer (behaviour 3.5); with
  // sources, once Run has started and every source's has.
  bool HasSynced() const;
  // Whether source `name` is there and its first list has been delivered.
  bool SourceHasSynced(const std::string& name) const;
  bool IsStopped() const;
  std::string LastSyncResourceVersion() const;
  // How far the indexer has applied the watch stream (DeltaFIFO::LastStoreSyncResourceVersion):
  // an object written at RV r is in GetIndexer() (or superseded) once this is >= r. "" before Run.
  std::string LastStoreSyncResourceVersion() const;
  // The same for the source that owns `key` (the ListerWatcher's when there are no sources): ""
  // when no source owns it. Each source has its own stream, and one can stand still for a minute
  // between bookmarks while another moves.
  std::string LastStoreSyncResourceVersionFor(std::string_view key) const;
  // Objects waiting for options.compact (stale entries included until dropped): after each pop,
  // at most twice the keys that have one plus 1,024, however fast objects change.
  size_t PendingCompactions() const;
  // Calls `fn` each time LastStoreSyncResourceVersion has moved on, from the informer's threads
  // (DeltaFIFOOptions::on_store_sync_advanced): what waits for the cache to apply a write
  // registers here instead of polling. On the processing thread it runs with the delta lock held,
  // as a non-blocking handler does (same rules: see AddEventHandler), and with no other lock of
  // the informer. Calls may overlap. Returns the id for RemoveStoreSyncListener; a call already
  // under way may still finish after removal.
  uint64_t AddStoreSyncListener(std::function<void()> fn);
  void RemoveStoreSyncListener(uint64_t id);

  std::shared_ptr<Indexer> GetIndexer() const { return indexer_; }
  std::shared_ptr<Store> GetStore() const { return indexer_; }

 private:
  // One notification for the handlers, and whether it is a resync.
  using PendingNotification = std::pair<Notification, bool>;
  // A reflector and its DeltaFIFO. The ListerWatcher's (no filter) runs its processing loop on
  // Run's thread; an added source's has a thread of its own.
  struct Source {
    std::string name;
    SourceFilter owns;  // null: every key
    std::shared_ptr<DeltaFIFO> fifo;
    std::shared_ptr<Reflector> reflector;
    std::jthread reflector_thread;
    std::jthread processing_thread;
  };
  std::unique_ptr<Source> NewSource(std::string name, std::shared_ptr<ListerWatcher> lw,
                                    SourceFilter owns, Clock::duration resync_period);
  // Starts an added source's reflector and processing threads.
  void StartSource(Source& source);
  // Closes the source's queue and joins its threads. Not with mu_ or block_deltas_ held.
  static void StopSource(Source& source);
  // Pops `fifo` until it is closed: applies each key's deltas and hands their notifications out.
  void ProcessLoop(DeltaFIFO& fifo);
  // The sources' resync timer (behaviour 2.6 for an informer without a ListerWatcher): one timer
  // for every source, so a due handler hears of each source's objects.
  void ResyncSourcesLoop(std::stop_token stop);
  // Applies the deltas to the indexer and collects the notifications they make (in order) into
  // `out`, to be distributed once the FIFO's watermark counts them (DeltaFIFO::Pop).
  Status ApplyDeltas(const Deltas& deltas, bool is_in_initial_list,
                     std::vector<PendingNotification>& out);
  void NotifyStoreSync() const;
  void RebuildStoreSyncSnapshotLocked();  // store_sync_mu_ held
  // Replaces each object whose compaction is due and that is still the one stored by
  // options_.compact's copy, after dropping stale entries if they have grown (informer thread,
  // after each pop and timed wake-up, block_deltas_ held).
  void CompactDue();
  // Drops the pending compactions whose object is no longer the one stored (replaced or deleted
  // since), when they have grown to twice what the last drop kept (block_deltas_ held).
  void DropStaleCompactionsIfGrown();

  const std::shared_ptr<ListerWatcher> lister_watcher_;
  const SharedIndexInformerOptions options_;
  Clock& clock_;
  const std::shared_ptr<Indexer> indexer_;
  SharedProcessor processor_;

  mutable std::mutex mu_;  // guards the fields below; taken after block_deltas_
  bool started_ = false;
  bool stopped_ = false;
  Clock::duration resync_check_period_;
  TransformFunc transform_;
  std::shared_ptr<DeltaFIFO> fifo_;
  std::shared_ptr<Reflector> reflector_;
  // The added sources (informers without a ListerWatcher), and whether Run has started them: a
  // source added from then on starts at once.
  std::vector<std::unique_ptr<Source>> sources_;
  bool sources_started_ = false;

  // Held while deltas are applied and handed out, and while a late handler gets its replay, so
  // that the replay and the live notifications neither overlap nor leave a gap (behaviour 4.5).
  // Taken before mu_ and before the DeltaFIFO's lock; non-blocking handlers run under it.
  mutable std::mutex block_deltas_;

  // Objects stored by a list or watch event, to be offered to options_.compact once due, oldest
  // first (only when it is set). The pointer is compared with the stored object, never read: an
  // object replaced or deleted since is skipped (a later object stored at a freed one's address
  // may be offered early, which is harmless: a compaction changes no field). Changed on the
  // processing thread only, under block_deltas_.
  struct PendingCompaction {
    Clock::time_point due;
    std::string key;
    const api::Object* object;
  };
  std::deque<PendingCompaction> compactions_;
  // What the last DropStaleCompactionsIfGrown kept.
  size_t compactions_kept_ = 0;

  mutable std::mutex store_sync_mu_;  // guards the three fields below; taken after no other lock
  uint64_t next_store_sync_id_ = 0;
  std::map<uint64_t, std::function<void()>> store_sync_listeners_;
  // The listeners as NotifyStoreSync calls them, rebuilt on each add and remove: a move of the
  // watermark (every watch event) takes a count of it instead of copying each function.
  std::shared_ptr<const std::vector<std::function<void()>>> store_sync_snapshot_;
};

}  // namespace kcm::cache
