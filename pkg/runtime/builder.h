// Builder: the one way to wire a Controller (controller-runtime's builder): the options, what to
// watch, then the reconciler.
//
//   auto controller = runtime::NewControllerManagedBy(options)
//                         .For(deployments)                       // the object itself
//                         .Owns(replicasets, {"apps", "Deployment"})  // its controller owner
//                         .Watches(pods, handler, predicates)     // anything else
//                         .Complete(reconciler);
//
// Informer watches get an InformerSource on the options' clock. Every watch is registered before
// Complete returns and starts with Controller::Start. Not thread-safe; use it on one thread.
#pragma once

#include <memory>
#include <vector>

#include "pkg/cache/shared_informer.h"
#include "pkg/runtime/controller.h"
#include "pkg/runtime/handler.h"
#include "pkg/runtime/predicate.h"
#include "pkg/runtime/reconciler.h"
#include "pkg/runtime/source.h"
#include "pkg/util/result.h"

namespace kcm::runtime {

class Builder {
 public:
  explicit Builder(ControllerOptions options) : options_(std::move(options)) {}

  // The primary resource: each event enqueues the object itself (EnqueueRequestForObject).
  Builder& For(std::shared_ptr<cache::SharedIndexInformer> informer,
               std::vector<Predicate> predicates = {});
  // Objects the primary resource owns: each event enqueues the owner (EnqueueRequestForOwner,
  // the controller owner by default).
  Builder& Owns(std::shared_ptr<cache::SharedIndexInformer> informer, OwnerOptions owner,
                std::vector<Predicate> predicates = {});
  // Any informer, mapped to requests by `handler` (e.g. EnqueueRequestsFromTypedFuncs).
  Builder& Watches(std::shared_ptr<cache::SharedIndexInformer> informer,
                   std::shared_ptr<EventHandler> handler, std::vector<Predicate> predicates = {});
  // Any source (a ChannelSource for events from outside the cluster).
  Builder& Watches(std::shared_ptr<Source> source, std::shared_ptr<EventHandler> handler,
                   std::vector<Predicate> predicates = {});

  // The controller with every watch registered; Start runs it. Fails with "InvalidArgument"
  // (naming the controller) when a watched informer or source is null or nothing is watched.
  Result<std::unique_ptr<Controller>> Complete(std::shared_ptr<Reconciler> reconciler);
  // The same for a reconciler that is not shared and outlives the controller: an object that
  // builds its runtime controller inside its own Run, which returns only once every worker
  // finished (the Deployment and ReplicaSet controllers).
  Result<std::unique_ptr<Controller>> Complete(Reconciler& reconciler);

 private:
  struct Watch {
    std::shared_ptr<Source> source;
    std::shared_ptr<EventHandler> handler;
    std::vector<Predicate> predicates;
  };
  std::shared_ptr<Source> SourceFor(std::shared_ptr<cache::SharedIndexInformer> informer);

  ControllerOptions options_;
  std::vector<Watch> watches_;
  bool missing_source_ = false;
};

// Starts a Builder (controller-runtime's NewControllerManagedBy).
inline Builder NewControllerManagedBy(ControllerOptions options) {
  return Builder(std::move(options));
}

}  // namespace kcm::runtime
