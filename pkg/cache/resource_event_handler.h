// ResourceEventHandler: what an informer notifies. Each handler is called from its own listener
// thread, one notification at a time, so an implementation needs no locking against itself;
// objects are shared and immutable. An exception thrown by a handler skips that one notification.
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
};

// A handler made of optional functions; an unset function ignores that notification.
struct ResourceEventHandlerFuncs {
  std::function<void(const api::ObjectPtr&, bool)> add_func;
  std::function<void(const api::ObjectPtr&, const api::ObjectPtr&)> update_func;
  std::function<void(const api::ObjectPtr&)> delete_func;
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
