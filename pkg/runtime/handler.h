// Event handlers turn source events into Requests on a controller's queue (controller-runtime's
// handler package). Handlers must be thread-safe; the queue is thread-safe. A handler that says
// NonBlocking runs on the informer's own thread, any other on a listener thread of its own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
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
  // True when the handler only computes requests and enqueues them (cache reads and short locks;
  // no I/O, no waiting): see cache::ResourceEventHandler::NonBlocking. Every handler this header
  // makes says so; the functions given to EnqueueRequestsFromMapFunc and
  // EnqueueRequestsFromTypedFuncs must therefore not block either.
  virtual bool NonBlocking() const { return false; }
};

// The request that names `obj` (namespace/name).
inline Request RequestFor(const api::Object& obj) {
  return Request{obj.Meta().namespace_, obj.Meta().name};
}

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

// A request a handler maps an event to: enqueued at once, or once `after` has passed when it is
// positive (the queue's AddAfter). Implicit from a Request.
struct Enqueue {
  Enqueue(Request r, std::chrono::nanoseconds delay = {})  // NOLINT(google-explicit-constructor)
      : request(std::move(r)), after(delay) {}
  Request request;
  std::chrono::nanoseconds after{0};
  friend bool operator==(const Enqueue&, const Enqueue&) = default;
};

// Adds each request to the queue (AddAfter for a delayed one); the queue drops duplicates.
void AddAll(Queue& q, const std::vector<Request>& requests);
void AddAll(Queue& q, const std::vector<Enqueue>& requests);

// A controller's own handlers for objects of type T (controller-runtime's TypedFuncs, but mapping
// to requests like kube-rs's watch mappers): each function returns what to enqueue and never sees
// the queue; the adapter enqueues it. `Out` is std::vector<Request> or std::vector<Enqueue>. An
// object of another type, and an event whose function is unset, is ignored.
template <typename T, typename Out = std::vector<Request>>
struct TypedFuncs {
  using Ptr = std::shared_ptr<const T>;
  std::function<Out(const Ptr&)> create;
  std::function<Out(const Ptr& old_obj, const Ptr& new_obj)> update;
  std::function<Out(const Ptr&)> del;
};

template <typename T, typename Out>
std::shared_ptr<EventHandler> EnqueueRequestsFromTypedFuncs(TypedFuncs<T, Out> funcs) {
  class Adapter final : public EventHandler {
   public:
    explicit Adapter(TypedFuncs<T, Out> f) : f_(std::move(f)) {}
    void Create(const CreateEvent& e, Queue& q) override {
      auto obj = std::dynamic_pointer_cast<const T>(e.object);
      if (f_.create && obj) AddAll(q, f_.create(obj));
    }
    void Update(const UpdateEvent& e, Queue& q) override {
      auto old_obj = std::dynamic_pointer_cast<const T>(e.old_object);
      auto new_obj = std::dynamic_pointer_cast<const T>(e.new_object);
      if (f_.update && old_obj && new_obj) AddAll(q, f_.update(old_obj, new_obj));
    }
    void Delete(const DeleteEvent& e, Queue& q) override {
      auto obj = std::dynamic_pointer_cast<const T>(e.object);
      if (f_.del && obj) AddAll(q, f_.del(obj));
    }
    void Generic(const GenericEvent&, Queue&) override {}
    bool NonBlocking() const override { return true; }

   private:
    TypedFuncs<T, Out> f_;
  };
  return std::make_shared<Adapter>(std::move(funcs));
}

}  // namespace kcm::runtime
