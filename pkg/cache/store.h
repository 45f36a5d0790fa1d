// Store interfaces: what a Reflector writes to (ReflectorStore), what a DeltaFIFO reads known
// objects from (KeyListerGetter), and the keyed object cache (Store). Implementations document
// their own thread-safety; the ones in this package are safe for concurrent use.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/api/watch_event.h"
#include "pkg/cache/keys.h"
#include "pkg/util/result.h"

namespace kcm::cache {

// The write side a Reflector needs: a DeltaFIFO in an informer, a plain Store elsewhere.
class ReflectorStore {
 public:
  virtual ~ReflectorStore() = default;
  virtual Status Add(api::ObjectPtr obj) = 0;
  virtual Status Update(api::ObjectPtr obj) = 0;
  virtual Status Delete(api::ObjectPtr obj) = 0;
  // Replaces the whole content with items, listed at resource_version.
  virtual Status Replace(std::vector<api::ObjectPtr> items,
                         const std::string& resource_version) = 0;
  // Periodic resync hook (behaviour 2.6); meaningless for a plain store.
  virtual Status Resync() = 0;
  // A watch bookmark: the stream is complete up to resource_version (client-go Store.Bookmark).
  // Only stores that report how far they have applied the stream care.
  virtual void Bookmark(const std::string& /*resource_version*/) {}
  // For a list being received: an object equal to obj that the store already holds (same key,
  // kind, uid and resourceVersion — one write of one object), else obj itself. Handing that back
  // lets a relist drop each unchanged item as soon as it is decoded instead of holding a second
  // copy of the cache until Replace. Thread-safe; a hint only (a miss costs memory, not
  // correctness).
  virtual api::ObjectPtr ReuseUnchanged(api::ObjectPtr obj) const { return obj; }

  // A list taken while it arrives (Reflector::List). BeginList: true if the store takes the items
  // of the list now starting in batches (AddListItems) instead of one Replace at the end; the
  // reflector then calls nothing else on the store until EndList (the list came whole, at
  // resource_version, its last items with it: the same as a Replace of every item added; the
  // reflector keeps at least the last item for EndList, so that the list's resourceVersion is
  // counted before that item is applied, as with Replace) or AbortList (it did not; what
  // was added stays, and the next list is given whole to Replace, whose deletion rules reconcile
  // it). Stores that cannot keep Replace's meaning this way return false (the default).
  virtual bool BeginList() { return false; }
  // Takes (and clears) items.
  virtual Status AddListItems(std::vector<api::ObjectPtr>& /*items*/) { return OkStatus(); }
  // Takes (and clears) items, the list's last.
  virtual Status EndList(std::vector<api::ObjectPtr>& /*items*/,
                         const std::string& /*resource_version*/) {
    return OkStatus();
  }
  virtual void AbortList() {}

  // The watch events of one read of the stream (Added, Modified, Deleted; objects moved from), in
  // order: the same as Add, Update or Delete of each. A store that hands them on to a consumer
  // thread overrides it to do so at once (DeltaFIFO: one lock, one wake-up). Returns the first
  // failure; the other events are applied all the same.
  virtual Status AddWatchEvents(std::vector<api::WatchEvent>& events) {
    Status first;
    for (api::WatchEvent& e : events) {
      Status s = e.type == api::WatchEventType::kAdded      ? Add(std::move(e.object))
                 : e.type == api::WatchEventType::kModified ? Update(std::move(e.object))
                 : e.type == api::WatchEventType::kDeleted
                     ? Delete(std::move(e.object))
                     : Status(Error::Local("InvalidWatchEvent",
                                           "only Added, Modified and Deleted events are applied"));
      if (!s.ok() && first.ok()) first = std::move(s);
    }
    return first;
  }
};

// Read access by key: the "known objects" a DeltaFIFO consults (behaviour 3.3, 3.4, 3.6).
class KeyListerGetter {
 public:
  virtual ~KeyListerGetter() = default;
  virtual std::vector<std::string> ListKeys() const = 0;
  // Each key in turn, without a vector of them all (a relist's Replace looks for the known keys
  // it did not list: 50,000 key strings at once were ≈ 4 MB of its peak). fn must not call into
  // this store.
  virtual void ForEachKey(const std::function<void(const std::string&)>& fn) const {
    for (const std::string& key : ListKeys()) fn(key);
  }
  // nullptr if absent.
  virtual api::ObjectPtr GetByKey(const std::string& key) const = 0;
};

// A keyed cache of immutable objects.
class Store : public ReflectorStore, public KeyListerGetter {
 public:
  virtual std::vector<api::ObjectPtr> List() const = 0;
  // The stored object with the same key as obj; nullptr if absent.
  virtual api::ObjectPtr Get(const api::Object& obj) const = 0;
};

// A Store without indexes, keyed by key_func.
std::shared_ptr<Store> NewStore(KeyFunc key_func);

}  // namespace kcm::cache
