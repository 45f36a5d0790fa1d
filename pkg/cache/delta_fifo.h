// DeltaFIFO: a queue of keys, each with the ordered list of changes (Deltas) seen for it since it
// was last popped; the producer is a Reflector, the consumer an informer's processing loop (spec
// 3). All methods are safe for concurrent use; Pop runs the process function under the queue lock.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/cache/keys.h"
#include "pkg/cache/store.h"
#include "pkg/util/result.h"

namespace kcm::cache {

enum class DeltaType { kAdded, kUpdated, kDeleted, kReplaced, kSync };

std::string_view DeltaTypeName(DeltaType type);

// One change. For kDeleted, object may be a DeletedFinalStateUnknown tombstone (see keys.h).
struct Delta {
  DeltaType type;
  api::ObjectPtr object;
};

// The changes for one key, oldest first.
using Deltas = std::vector<Delta>;

// Prunes or converts an object before it is queued. Never called for tombstones or Sync deltas.
using TransformFunc = std::function<Result<api::ObjectPtr>(api::ObjectPtr)>;

// Called by Pop with every delta of one key. is_in_initial_list: the key belonged to the first
// Replace and HasSynced was still false when it was popped (spec 3.5).
using PopProcessFunc = std::function<Status(const Deltas& deltas, bool is_in_initial_list)>;

struct DeltaFIFOOptions {
  // Defaults to MetaNamespaceKeyFunc; tombstones always key by their stored key.
  KeyFunc key_func;
  // The informer's indexer: what the consumer already knows (spec 3.3, 3.4, 3.6). May be null.
  std::shared_ptr<const KeyListerGetter> known_objects;
  TransformFunc transform;
};

class DeltaFIFO final : public ReflectorStore {
 public:
  explicit DeltaFIFO(DeltaFIFOOptions options);

  Status Add(api::ObjectPtr obj) override;
  Status Update(api::ObjectPtr obj) override;
  // Dropped when the key is neither queued nor known (spec 3.3).
  Status Delete(api::ObjectPtr obj) override;
  // Replaced for every item; tombstones for keys queued or known but not listed (spec 3.4).
  Status Replace(std::vector<api::ObjectPtr> items, const std::string& resource_version) override;
  // Sync for each known key that has nothing queued (spec 3.6).
  Status Resync() override;

  // Blocks until a key is queued or the queue is closed, removes the key and runs process with its
  // deltas while holding the queue lock, so that HasSynced never turns true before the consumer has
  // applied the last initial item. Returns process's status (the deltas are not requeued on error,
  // as upstream no longer does), or an error with reason "FIFOClosed" once closed and empty.
  Status Pop(const PopProcessFunc& process);
  // Wakes every Pop; queued items are still handed out, then Pop reports FIFOClosed.
  void Close();
  bool IsClosed() const;

  // True once the first Replace's items (and its tombstones) were all popped, or once an
  // Add/Update/Delete came before any Replace (spec 3.5).
  bool HasSynced() const;

  std::vector<std::string> ListKeys() const;
  // The deltas queued for key (empty if none).
  Deltas GetByKey(const std::string& key) const;
  size_t Len() const;
  std::string KeyOf(const api::Object& obj) const;

 private:
  Status QueueActionLocked(DeltaType type, api::ObjectPtr obj);
  bool HasSyncedLocked() const;

  const DeltaFIFOOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Deltas> items_;
  std::deque<std::string> queue_;  // each key at most once, in first-queued order
  bool populated_ = false;
  size_t initial_population_count_ = 0;
  bool closed_ = false;
};

}  // namespace kcm::cache
