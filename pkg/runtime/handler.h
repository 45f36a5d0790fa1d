// Event handlers turn source events into Requests on a controller's queue (controller-runtime's
// handler package). Handlers run on informer listener threads and must be thread-safe; the queue
// is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "pkg/runtime/event.h"
#include "pkg/runtime/request.h"
#include "pkg/workqueue/rate_limiting_queue.h"

namespace kcm::runtime {

using Queue = workqueue::RateLimitingQueue;

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void Create(const CreateEvent& e, Queue& q) = 0;
  virtual void Update(const UpdateEvent& e, Queue& q) = 0;
  virtual void Delete(const DeleteEvent& e, Queue& q) = 0;
  virtual void Generic(const GenericEvent& e, Queue& q) = 0;
};

// Enqueues the object itself.
std::shared_ptr<EventHandler> EnqueueRequestForObject();

// Enqueues the owners of kind `owner_kind` (and API group `owner_group`, "" for core) named in the
// object's ownerReferences; with only_controller, just the one with controller=true. Owners are
// looked up in the object's namespace unless owner_cluster_scoped.
struct OwnerOptions {
  std::string owner_group;
  std::string owner_kind;
  bool only_controller = true;
  bool owner_cluster_scoped = false;
};
std::shared_ptr<EventHandler> EnqueueRequestForOwner(OwnerOptions options);

// Enqueues whatever the function maps the object to.
using MapFunc = std::function<std::vector<Request>(const api::Object&)>;
std::shared_ptr<EventHandler> EnqueueRequestsFromMapFunc(MapFunc fn);

// A handler made of functions; unset functions ignore their events.
struct EventHandlerFuncs final : EventHandler {
  std::function<void(const CreateEvent&, Queue&)> create;
  std::function<void(const UpdateEvent&, Queue&)> update;
  std::function<void(const DeleteEvent&, Queue&)> del;
  std::function<void(const GenericEvent&, Queue&)> generic;

  void Create(const CreateEvent& e, Queue& q) override {
    if (create) create(e, q);
  }
  void Update(const UpdateEvent& e, Queue& q) override {
    if (update) update(e, q);
  }
  void Delete(const DeleteEvent& e, Queue& q) override {
    if (del) del(e, q);
  }
  void Generic(const GenericEvent& e, Queue& q) override {
    if (generic) generic(e, q);
  }
};

}  // namespace kcm::runtime
