#include "pkg/cache/delta_fifo.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kcm::cache {
namespace {

// Bucket count beyond which a drained queue frees its maps (see Pop).
constexpr size_t kKeepBuckets = 1024;

// Two consecutive deletions of one key are one deletion; keep the delta that still carries the
// real object rather than a tombstone (behaviour 3.2). Nothing else is merged: an update between
// two events is information the handlers may need.
void DedupNewest(Deltas& deltas) {
  const size_t n = deltas.size();
  if (n < 2) {
    return;
  }
  Delta& newest = deltas[n - 1];
  Delta& previous = deltas[n - 2];
  if (newest.type != DeltaType::kDeleted || previous.type != DeltaType::kDeleted) {
    return;
  }
  if (AsTombstone(*previous.object) != nullptr) {
    previous = std::move(newest);
  }
  deltas.pop_back();
}

}  // namespace

std::string_view DeltaTypeName(DeltaType type) {
  switch (type) {
    case DeltaType::kAdded:
      return "Added";
    case DeltaType::kUpdated:
      return "Updated";
    case DeltaType::kDeleted:
      return "Deleted";
    case DeltaType::kReplaced:
      return "Replaced";
    case DeltaType::kSync:
      return "Sync";
  }
  return "Unknown";
}

DeltaFIFO::DeltaFIFO(DeltaFIFOOptions options)
    : options_([&] {
        if (!options.key_func) {
          options.key_func = MetaNamespaceKeyFunc;
        }
        return std::move(options);
      }()) {}

std::string_view DeltaFIFO::CopyKeyText(std::string_view key) {
  if (key.empty()) return {};
  auto* text = static_cast<char*>(pool_.allocate(key.size(), 1));
  std::copy(key.begin(), key.end(), text);
  return {text, key.size()};
}

void DeltaFIFO::FreeKeyText(std::string_view key) {
  if (!key.empty()) pool_.deallocate(const_cast<char*>(key.data()), key.size(), 1);
}

std::string DeltaFIFO::KeyOf(const api::Object& obj) const {
  if (const auto* tombstone = AsTombstone(obj)) {
    return tombstone->Key();
  }
  return options_.key_func(obj);
}

Status DeltaFIFO::Add(api::ObjectPtr obj) {
  std::unique_lock lock(mu_);
  Status s = PushLocked(DeltaType::kAdded, std::move(obj));
  WakeConsumerAndUnlock(lock);
  return s;
}

Status DeltaFIFO::Update(api::ObjectPtr obj) {
  std::unique_lock lock(mu_);
  Status s = PushLocked(DeltaType::kUpdated, std::move(obj));
  WakeConsumerAndUnlock(lock);
  return s;
}

Status DeltaFIFO::Delete(api::ObjectPtr obj) {
  const std::string key = KeyOf(*obj);
  std::unique_lock lock(mu_);
  bool advanced = false;
  Status s = PushDeleteLocked(key, std::move(obj), &advanced);
  WakeConsumerAndUnlock(lock);
  if (advanced) NotifyAdvanced();
  return s;
}

Status DeltaFIFO::PushLocked(DeltaType type, api::ObjectPtr obj) {
  populated_ = true;
  const uint64_t seq = NewMarkLocked(obj->Meta().resource_version);
  return QueueActionLocked(type, std::move(obj), seq);
}

Status DeltaFIFO::PushDeleteLocked(const std::string& key, api::ObjectPtr obj, bool* advanced) {
  populated_ = true;
  const bool queued = items_.contains(key);
  const bool known = options_.known_objects && options_.known_objects->GetByKey(key) != nullptr;
  const uint64_t seq = NewMarkLocked(obj->Meta().resource_version);
  if (!queued && !known) {
    // Already deleted by a relist (or never seen): a second report would confuse handlers. The
    // consumer is as up to date as if it had been applied.
    if (AdvanceLocked()) *advanced = true;
    return OkStatus();
  }
  return QueueActionLocked(DeltaType::kDeleted, std::move(obj), seq);
}

void DeltaFIFO::WakeConsumerAndUnlock(std::unique_lock<std::mutex>& lock) {
  // Nothing queued (a dropped deletion): nothing to wake a consumer for. A consumer busy applying
  // earlier items is not in cv_, and NotifyOne makes no system call for it: it checks the queue
  // (under mu_) before it blocks again. After unlocking, so the one woken does not block on mu_.
  const bool wake = !queue_.empty();
  lock.unlock();
  if (wake) cv_.NotifyOne();
}

void DeltaFIFO::WaitLocked(std::unique_lock<std::mutex>& lock) const {
  while (queue_.empty() && !closed_) cv_.Wait(lock);
}

namespace {

bool SameWrite(const api::Object& held, const api::Object& obj) {
  const api::ObjectMeta& a = held.Meta();
  const api::ObjectMeta& b = obj.Meta();
  return !b.resource_version.empty() && a.resource_version == b.resource_version &&
         a.uid == b.uid && held.Kind() == obj.Kind() && AsTombstone(held) == nullptr;
}

}  // namespace

api::ObjectPtr DeltaFIFO::ReuseUnchanged(api::ObjectPtr obj) const {
  if (!obj || options_.transform || obj->Meta().resource_version.empty()) return obj;
  const std::string key = KeyOf(*obj);
  {
    std::lock_guard lock(mu_);
    if (auto it = items_.find(key); it != items_.end() && !it->second.deltas.empty()) {
      // What is queued is newer than what the consumer holds.
      const Delta& last = it->second.deltas.back();
      if (last.type != DeltaType::kDeleted && last.object && SameWrite(*last.object, *obj)) {
        return last.object;
      }
      return obj;
    }
  }
  if (options_.known_objects) {
    api::ObjectPtr known = options_.known_objects->GetByKey(key);
    if (known && SameWrite(*known, *obj)) return known;
  }
  return obj;
}

Status DeltaFIFO::Replace(std::vector<api::ObjectPtr> items, const std::string& resource_version) {
  std::unique_lock lock(mu_);
  // Whatever was queued before an error is queued: wake the consumers for it too.
  struct Wake {
    FutexCondition& cv;
    ~Wake() { cv.NotifyAll(); }
  } wake{cv_};
  // The whole list is one push: its RV counts once every item and tombstone has been popped.
  const uint64_t seq = NewMarkLocked(resource_version);
  // Every listed key gets this push's seq in its entry: that marks it listed (no set of the keys
  // on the side), and counts the distinct keys.
  size_t listed = 0;
  // One bucket array for the whole list, not a chain of rehashes (each a new array beside the
  // old) on top of a cache that a relist already holds whole.
  items_.reserve(items_.size() + items.size());
  for (api::ObjectPtr& obj : items) {
    bool first = false;
    if (Status s = QueueActionLocked(DeltaType::kReplaced, std::move(obj), seq, &first); !s.ok()) {
      return s;
    }
    if (first) ++listed;
  }

  // Keys queued but not listed were deleted while the watch was down.
  size_t queued_deletions = 0;
  std::vector<std::pair<std::string, api::ObjectPtr>> vanished;
  for (const auto& [key, entry] : items_) {
    if (entry.HasSeq(seq)) {
      continue;
    }
    api::ObjectPtr last = entry.deltas.empty() ? nullptr : entry.deltas.back().object;
    // Never wrap a tombstone in a tombstone: carry the object it already holds.
    if (last) {
      if (const auto* tombstone = AsTombstone(*last)) {
        last = tombstone->Obj();
      }
    }
    vanished.emplace_back(key, std::move(last));
  }
  // Known keys (the consumer's cache) with nothing queued that are not listed: same reasoning.
  if (options_.known_objects) {
    std::vector<std::string> known_vanished;
    options_.known_objects->ForEachKey([&](const std::string& key) {
      // Every listed key is queued by now.
      if (!items_.contains(key)) known_vanished.push_back(key);
    });
    for (std::string& key : known_vanished) {
      api::ObjectPtr last = options_.known_objects->GetByKey(key);
      vanished.emplace_back(std::move(key), std::move(last));
    }
  }
  for (auto& [key, last] : vanished) {
    ++queued_deletions;
    auto tombstone = std::make_shared<const DeletedFinalStateUnknown>(key, std::move(last));
    if (Status s = QueueActionLocked(DeltaType::kDeleted, std::move(tombstone), seq); !s.ok()) {
      return s;
    }
  }
  // An empty list (nothing queued for it) is applied at once.
  const bool advanced = AdvanceLocked();

  if (!populated_) {
    populated_ = true;
    initial_population_count_ = listed + queued_deletions;
  }
  lock.unlock();
  if (advanced) NotifyAdvanced();
  return OkStatus();
}

bool DeltaFIFO::BeginList() {
  std::lock_guard lock(mu_);
  // Nothing queued, applied or listed in part before: the list cannot make anything vanish, so
  // it needs none of Replace's deletion rules.
  if (populated_ || list_seq_ || list_taken_in_part_ || !items_.empty()) return false;
  if (options_.known_objects && !options_.known_objects->ListKeys().empty()) return false;
  // The list's push; its resourceVersion is known at EndList.
  list_seq_ = NewMarkLocked("");
  return true;
}

Status DeltaFIFO::AddListItems(std::vector<api::ObjectPtr>& items) {
  std::unique_lock lock(mu_);
  if (!list_seq_) {
    items.clear();
    return Error::Local("InvalidState", "DeltaFIFO: list items without BeginList");
  }
  Status s = QueueListItemsLocked(items);
  lock.unlock();
  cv_.NotifyAll();
  return s;
}

Status DeltaFIFO::QueueListItemsLocked(std::vector<api::ObjectPtr>& items) {
  Status s = OkStatus();
  for (api::ObjectPtr& obj : items) {
    bool first = false;
    s = QueueActionLocked(DeltaType::kReplaced, std::move(obj), *list_seq_, &first);
    if (!s.ok()) break;
    list_taken_in_part_ = true;
    // Counted as Replace counts its listed keys: each key once.
    if (first) ++initial_population_count_;
  }
  items.clear();
  return s;
}

Status DeltaFIFO::EndList(std::vector<api::ObjectPtr>& items, const std::string& resource_version) {
  std::unique_lock lock(mu_);
  if (!list_seq_) return Error::Local("InvalidState", "DeltaFIFO: EndList without BeginList");
  // The last items and the list's mark under one lock: the last item popped finds the list's
  // resourceVersion counted, as after a Replace (its handlers read it).
  if (Status s = QueueListItemsLocked(items); !s.ok()) {
    lock.unlock();
    cv_.NotifyAll();
    return s;
  }
  cv_.NotifyAll();
  if (!resource_version.empty()) marks_.emplace(*list_seq_, resource_version);
  list_seq_.reset();
  list_taken_in_part_ = false;
  // From here HasSynced waits only for the items still queued or in flight (all of them counted
  // in initial_population_count_ as they came); the list's RV counts once they are applied.
  populated_ = true;
  const bool advanced = AdvanceLocked();
  // The consumer may have drained the queue before the list ended: nothing else would free it.
  [[maybe_unused]] const bool released = ReleaseIfDrainedLocked();
  lock.unlock();
  if (advanced) NotifyAdvanced();
#if defined(__GLIBC__)
  if (released) malloc_trim(0);
#endif
  return OkStatus();
}

void DeltaFIFO::AbortList() {
  std::lock_guard lock(mu_);
  // What was queued stays queued (and is applied); populated_ stays false, so HasSynced too.
  list_seq_.reset();
}

bool DeltaFIFO::ReleaseIfDrainedLocked() {
  // Not while a list is being taken: the consumer drains the queue again and again while it
  // waits for the next batch, and the pool would be torn down (and trimmed) each time.
  if (list_seq_ || !queue_.empty() || items_.bucket_count() <= kKeepBuckets) return false;
  decltype(items_)(&pool_).swap(items_);
  decltype(queue_)().swap(queue_);
  pool_.release();
  return true;
}

Status DeltaFIFO::Resync() {
  if (!options_.known_objects) {
    return OkStatus();
  }
  std::lock_guard lock(mu_);
  struct Wake {
    FutexCondition& cv;
    ~Wake() { cv.NotifyAll(); }
  } wake{cv_};
  for (const std::string& key : options_.known_objects->ListKeys()) {
    api::ObjectPtr obj = options_.known_objects->GetByKey(key);
    // Pending deltas will bring the consumer up to date anyway; a Sync behind them adds nothing.
    if (!obj || items_.contains(KeyOf(*obj))) {
      continue;
    }
    if (Status s = QueueActionLocked(DeltaType::kSync, std::move(obj), std::nullopt); !s.ok()) {
      return s;
    }
  }
  return OkStatus();
}

void DeltaFIFO::Bookmark(const std::string& resource_version) {
  std::unique_lock lock(mu_);
  NewMarkLocked(resource_version);
  const bool advanced = AdvanceLocked();
  lock.unlock();
  if (advanced) NotifyAdvanced();
}

uint64_t DeltaFIFO::NewMarkLocked(const std::string& rv) {
  const uint64_t seq = next_seq_++;
  if (!rv.empty()) marks_.emplace(seq, rv);
  return seq;
}

bool DeltaFIFO::AdvanceLocked() {
  // Every push older than the oldest pending one has been applied (or had nothing to apply).
  auto end = pending_.empty() ? marks_.end() : marks_.lower_bound(pending_.begin()->first);
  if (end == marks_.begin()) return false;
  const bool changed = applied_rv_ != std::prev(end)->second;
  applied_rv_ = std::prev(end)->second;
  marks_.erase(marks_.begin(), end);
  return changed;
}

void DeltaFIFO::NotifyAdvanced() const {
  if (options_.on_store_sync_advanced) options_.on_store_sync_advanced();
}

std::string DeltaFIFO::LastStoreSyncResourceVersion() const {
  std::lock_guard lock(mu_);
  return applied_rv_;
}

Status DeltaFIFO::QueueActionLocked(DeltaType type, api::ObjectPtr obj, std::optional<uint64_t> seq,
                                    bool* first_of_seq) {
  const std::string key = KeyOf(*obj);
  // Every new object passes here exactly once, which makes it the place to transform. Tombstones
  // hold an object that was transformed already, and Sync re-queues an object from the cache.
  if (options_.transform && type != DeltaType::kSync && AsTombstone(*obj) == nullptr) {
    Result<api::ObjectPtr> transformed = options_.transform(std::move(obj));
    if (!transformed.ok()) {
      return transformed.error();
    }
    obj = std::move(transformed).value();
  }
  auto it = items_.find(key);
  if (it == items_.end()) {
    const std::string_view text = CopyKeyText(key);
    auto [inserted, _] = items_.try_emplace(text);
    it = inserted;
    queue_.push_back(&it->first);
  }
  Entry& entry = it->second;
  entry.deltas.push_back(Delta{type, std::move(obj)});
  DedupNewest(entry.deltas);
  if (seq) {
    const bool first = !entry.HasSeq(*seq);
    if (first_of_seq != nullptr) *first_of_seq = first;
    // A key counts once per push however many of the push's deltas it holds.
    if (first) {
      entry.AddSeq(*seq);
      ++pending_[*seq];
    }
  }
  return OkStatus();
}

Status DeltaFIFO::Pop(const PopProcessFunc& process) {
  return Pop(process, [] {});
}

Status DeltaFIFO::Pop(const PopProcessFunc& process, const std::function<void()>& after_applied) {
  std::unique_lock lock(mu_);
  WaitLocked(lock);
  if (queue_.empty()) {
    return Error::Local("FIFOClosed", "DeltaFIFO: manipulating with closed queue");
  }
  const bool is_in_initial_list = !InitialListPoppedLocked();
  const bool initial_item = initial_population_count_ > 0;
  Status s = OkStatus();
  bool advanced = false;
  {
    auto node = items_.extract(items_.find(*queue_.front()));
    queue_.pop_front();
    if (initial_item) {
      --initial_population_count_;
      ++initial_in_flight_;
    }
    Entry& entry = node.mapped();
    s = process(entry.deltas, is_in_initial_list);
    // Applied (or dropped on error, as upstream does not requeue): these pushes no longer hold
    // the watermark back.
    auto release = [this](uint64_t seq) {
      if (auto it = pending_.find(seq); it != pending_.end() && --it->second == 0) {
        pending_.erase(it);
      }
    };
    if (entry.first_seq != Entry::kNoSeq) {
      entry.ForEachSeq(release);
      advanced = AdvanceLocked();
    }
    FreeKeyText(node.key());
  }  // the node goes back to the pool before the pool may be released below
  // A drained queue gives back what a big list took: the map's nodes, keys and delta buffers (the
  // pool, in whole blocks) and its bucket array; steady traffic never grows the map past the
  // threshold, so nothing churns. The map is emptied first: nothing may point into the pool.
  [[maybe_unused]] const bool released = ReleaseIfDrainedLocked();
  lock.unlock();
  // Without the lock: what after_applied calls (event handlers, on the informer's thread) may read
  // the watermark or HasSynced. Only the initial list's items come back for the lock, so the
  // steady state pays nothing for HasSynced waiting on them.
  struct InFlightDone {
    DeltaFIFO& fifo;
    bool initial;
    ~InFlightDone() {
      if (!initial) return;
      std::lock_guard relock(fifo.mu_);
      --fifo.initial_in_flight_;
    }
  };
  {
    InFlightDone in_flight_done{*this, initial_item};
    after_applied();
  }
  // After the in-flight count: a store-sync listener (WaitForCacheSync's SyncWaker) that reads
  // HasSynced on this move must already see the last initial item as handled.
  if (advanced) NotifyAdvanced();
#if defined(__GLIBC__)
  // The pool's blocks are freed in one piece, but glibc returns to the system on its own only
  // what lies at the top of an arena: give back the free pages inside the heap too (≈ 8 MB after
  // 50,000 pods; once per big drain, never in steady traffic).
  if (released) malloc_trim(0);
#endif
  return s;
}

bool DeltaFIFO::WaitForItem() const {
  std::unique_lock lock(mu_);
  WaitLocked(lock);
  return !closed_;
}

bool DeltaFIFO::WaitForItemFor(std::chrono::steady_clock::duration timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu_);
  while (queue_.empty() && !closed_) {
    if (!cv_.WaitUntil(lock, deadline)) break;
  }
  return !queue_.empty() && !closed_;
}

void DeltaFIFO::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.NotifyAll();
}

bool DeltaFIFO::IsClosed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

bool DeltaFIFO::HasSynced() const {
  std::lock_guard lock(mu_);
  return HasSyncedLocked();
}

bool DeltaFIFO::HasSyncedLocked() const {
  return InitialListPoppedLocked() && initial_in_flight_ == 0;
}

bool DeltaFIFO::InitialListPoppedLocked() const {
  return populated_ && initial_population_count_ == 0;
}

std::vector<std::string> DeltaFIFO::ListKeys() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(queue_.size());
  for (const std::string_view* key : queue_) out.emplace_back(*key);
  return out;
}

Deltas DeltaFIFO::GetByKey(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? Deltas{} : it->second.deltas;
}

size_t DeltaFIFO::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

Status DeltaFIFO::AddWatchEvents(std::vector<api::WatchEvent>& events) {
  // Keys first, as Delete takes its key before the lock.
  std::vector<std::string> delete_keys;
  for (const api::WatchEvent& e : events) {
    if (e.type == api::WatchEventType::kDeleted && e.object) {
      delete_keys.push_back(KeyOf(*e.object));
    }
  }
  Status first;
  bool advanced = false;
  std::unique_lock lock(mu_);
  std::size_t next_delete = 0;
  for (api::WatchEvent& e : events) {
    Status s;
    if (!e.object) {
      s = Error::Local("InvalidWatchEvent", "a watch event without an object");
    } else if (e.type == api::WatchEventType::kAdded) {
      s = PushLocked(DeltaType::kAdded, std::move(e.object));
    } else if (e.type == api::WatchEventType::kModified) {
      s = PushLocked(DeltaType::kUpdated, std::move(e.object));
    } else if (e.type == api::WatchEventType::kDeleted) {
      s = PushDeleteLocked(delete_keys[next_delete++], std::move(e.object), &advanced);
    } else {
      s = Error::Local("InvalidWatchEvent", "only Added, Modified and Deleted events are queued");
    }
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  WakeConsumerAndUnlock(lock);
  if (advanced) NotifyAdvanced();
  return first;
}

}  // namespace kcm::cache
