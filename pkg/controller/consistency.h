// ConsistencyStore (upstream pkg/controller/util/consistency, feature gates
// StaleControllerConsistency<Kind>): read-your-own-writes for a controller whose caches are
// informers. After a sync writes objects (the owner's status, pods it created or patched) it
// records the resourceVersion each write returned, per owner and per resource; before the next
// sync of that owner EnsureReady compares them with how far each informer's store has applied
// the watch stream (SharedIndexInformer::LastStoreSyncResourceVersion). A store that has not yet
// applied the write makes the sync wait (the caller requeues it), so the controller never acts on
// a cache that predates its own last action. Upstream returns an error from the sync, so the
// key comes back through the workqueue's per-item exponential backoff; here, with a ready sink
// set, a stale owner instead waits in the store and is handed to the sink (the controller's
// queue) as soon as StoresAdvanced finds every store caught up: no sooner, since it only goes
// once the watermarks passed what was written, and no later than the informer's notification
// that they did (SharedIndexInformer::AddStoreSyncListener). Thread-safe; EnsureReady and
// WroteAt for the same owner are not called concurrently (one worker per key).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pkg/util/result.h"

namespace kcm::controller {

// What EnsureReady reports when a store is behind (upstream ConsistencyError).
struct ConsistencyError {
  std::string group_resource;  // "replicasets.apps", "pods"
  std::string read_rv;         // "" = the store has applied nothing yet
  std::string wrote_rv;
  // The owner waits in the store and goes to the ready sink once caught up (or went already):
  // the caller must not requeue it (EnsureReady with wait = true and a sink set).
  bool waiting = false;
  // Upstream's text: "read version: R is not as new as written version: W for group resource
  // G" (or "read version is not synced (written version: W) ..." when R is "").
  std::string Message() const;
};

class ConsistencyStore {
 public:
  // The resourceVersion a store has applied up to ("" = none yet), for `owner`'s objects: an
  // informer with a source per shard has a watermark per source
  // (SharedIndexInformer::LastStoreSyncResourceVersionFor).
  using LastSyncRVGetter = std::function<std::string(std::string_view owner)>;

  // One getter per group resource ("replicasets.apps", "pods"). A write recorded for a resource
  // without a getter makes EnsureReady fail (as upstream: nothing could ever vouch for it).
  explicit ConsistencyStore(std::map<std::string, LastSyncRVGetter> stores);

  ConsistencyStore(const ConsistencyStore&) = delete;
  ConsistencyStore& operator=(const ConsistencyStore&) = delete;

  // Records that a write for `owner` ("namespace/name", uid `owner_uid`) to `resource` returned
  // `rv`. Keeps the newest per resource; an RV that does not compare is ignored, and so is one
  // that `resource`'s store has applied already when `owner` has no record (it would be ready
  // at once). A record of another uid (the owner was deleted and recreated) is replaced.
  void WroteAt(const std::string& owner, const std::string& owner_uid, const std::string& resource,
               const std::string& rv);
  // Forgets `owner` if its record has `owner_uid` ("" = whatever uid).
  void Clear(const std::string& owner, std::string_view owner_uid);
  // nullopt when every store has applied at least what was written for `owner` (the record is
  // then dropped); otherwise the first store found behind. With `wait` and a ready sink set, a
  // stale owner is also registered to go to the sink once ready (the error says `waiting`); it
  // is checked again after registering, so a store that caught up meanwhile makes this return
  // nullopt instead and nothing waits.
  std::optional<ConsistencyError> EnsureReady(const std::string& owner, bool wait = false);

  // Where waiting owners go once every store applied their writes (the controller puts them back
  // on its queue). Called from the threads that call StoresAdvanced, without the store's lock.
  // Null (the default) = nothing waits: EnsureReady's callers requeue by themselves. Setting it
  // to null also forgets the owners that were waiting.
  using ReadySink = std::function<void(const std::string& owner)>;
  void SetReadySink(ReadySink sink);
  // A store's watermark moved on (wire it to SharedIndexInformer::AddStoreSyncListener): hands
  // every waiting owner that is now ready to the sink, once.
  void StoresAdvanced();

  // Owners with a record, and owners waiting for the sink (for tests and metrics).
  size_t Size() const;
  size_t Waiting() const;

 private:
  struct Record {
    std::string owner_uid;
    std::map<std::string, std::string> versions;  // resource -> newest written RV
  };
  // The first store behind `record`'s writes, if any. Calls the getters: not under mu_.
  std::optional<ConsistencyError> Check(const std::string& owner, const Record& record) const;

  const std::map<std::string, LastSyncRVGetter> stores_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Record> records_;
  ReadySink sink_;
  std::set<std::string> waiting_;  // owners handed to sink_ once ready
};

}  // namespace kcm::controller
