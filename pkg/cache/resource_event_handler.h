// ResourceEventHandler: what an informer notifies. A handler is called one notification at a time,
// in order, so an implementation needs no locking against itself: by default from a listener
// thread of its own behind an unbounded buffer (client-go's processorListener), or, when it
// declares itself NonBlocking, directly on the informer's thread (no hand-off). Objects are shared
// and immutable. An exception thrown by a handler skips that one notification.
#pragma once

#include <functional>
#include <memory>

#include "pkg/api/object.h"

namespace kcm::cache {

class ResourceEventHandler {
 public:
  virtual ~ResourceEventHandler() = default;
  // is_in_initial_list: obj came from the informer's first list, or from the cache replay a handler
  // added after start receives (behaviour 3.5, 4.5).
  virtual void OnAdd(const api::ObjectPtr& obj, bool is_in_initial_list) = 0;
  // Equal resourceVersions mean a periodic resync, not a change (behaviour 4.2).
  virtual void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) = 0;
  // obj is the last known state, or a DeletedFinalStateUnknown tombstone (see AsTombstone).
  virtual void OnDelete(const api::ObjectPtr& obj) = 0;
  // True for a handler that only computes and enqueues (reads caches, takes short locks, never
  // waits on I/O or on another thread): the informer then calls it on its own thread, which saves
  // a thread hand-off per event; a slow one would delay every other handler of the informer and
  // the cache itself. See SharedIndexInformer::AddEventHandler for what it may not call.
  virtual bool NonBlocking() const { return false; }
};

// A handler made of optional functions; an unset function ignores that notification.
struct ResourceEventHandlerFuncs {
  std::function<void(const api::ObjectPtr&, bool)> add_func;
  std::function<void(const api::ObjectPtr&, const api::ObjectPtr&)> update_func;
  std::function<void(const api::ObjectPtr&)> delete_func;
  // ResourceEventHandler::NonBlocking.
  bool non_blocking = false;
};

std::shared_ptr<ResourceEventHandler> MakeResourceEventHandler(ResourceEventHandlerFuncs funcs);

// What AddEventHandler returns: the handle to remove the handler and to ask whether it has
// received every object of the initial list (behaviour 4.5). Safe to use from any thread.
class ResourceEventHandlerRegistration {
 public:
  virtual ~ResourceEventHandlerRegistration() = default;
  virtual bool HasSynced() const = 0;
};

}  // namespace kcm::cache
