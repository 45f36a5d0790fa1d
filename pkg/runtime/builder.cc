#include "pkg/runtime/builder.h"

#include <utility>

#include "pkg/runtime/informer_source.h"

namespace kcm::runtime {

std::shared_ptr<Source> Builder::SourceFor(std::shared_ptr<cache::SharedIndexInformer> informer) {
  if (!informer) return nullptr;
  return std::make_shared<InformerSource>(std::move(informer), options_.clock);
}

Builder& Builder::For(std::shared_ptr<cache::SharedIndexInformer> informer,
                      std::vector<Predicate> predicates) {
  return Watches(SourceFor(std::move(informer)), EnqueueRequestForObject(), std::move(predicates));
}

Builder& Builder::Owns(std::shared_ptr<cache::SharedIndexInformer> informer, OwnerOptions owner,
                       std::vector<Predicate> predicates) {
  return Watches(SourceFor(std::move(informer)), EnqueueRequestForOwner(std::move(owner)),
                 std::move(predicates));
}

Builder& Builder::Watches(std::shared_ptr<cache::SharedIndexInformer> informer,
                          std::shared_ptr<EventHandler> handler,
                          std::vector<Predicate> predicates) {
  return Watches(SourceFor(std::move(informer)), std::move(handler), std::move(predicates));
}

Builder& Builder::Watches(std::shared_ptr<Source> source, std::shared_ptr<EventHandler> handler,
                          std::vector<Predicate> predicates) {
  if (!source || !handler) missing_source_ = true;
  watches_.push_back({std::move(source), std::move(handler), std::move(predicates)});
  return *this;
}

Result<std::unique_ptr<Controller>> Builder::Complete(std::shared_ptr<Reconciler> reconciler) {
  if (missing_source_ || watches_.empty() || !reconciler) {
    return Error::Local("InvalidArgument",
                        options_.name + " controller: informers and a reconciler are required");
  }
  auto controller = std::make_unique<Controller>(options_, std::move(reconciler));
  for (Watch& w : watches_) {
    // Before Start a watch is only remembered: this cannot fail.
    if (Status s = controller->Watch(w.source, w.handler, w.predicates); !s.ok()) return s.error();
  }
  return controller;
}

Result<std::unique_ptr<Controller>> Builder::Complete(Reconciler& reconciler) {
  // Shares no ownership: the caller keeps the reconciler alive for the controller's life.
  return Complete(std::shared_ptr<Reconciler>(std::shared_ptr<void>(), &reconciler));
}

}  // namespace kcm::runtime
