// Predicates filter events before a handler sees them (controller-runtime's predicate package).
// A predicate is a value type of four functions; unset functions pass every event. Predicates
// must be thread-safe (they run on informer listener threads).
#pragma once

#include <functional>
#include <vector>

#include "pkg/runtime/event.h"

namespace kcm::runtime {

struct Predicate {
  std::function<bool(const CreateEvent&)> create;
  std::function<bool(const UpdateEvent&)> update;
  std::function<bool(const DeleteEvent&)> del;
  std::function<bool(const GenericEvent&)> generic;

  bool Create(const CreateEvent& e) const { return !create || create(e); }
  bool Update(const UpdateEvent& e) const { return !update || update(e); }
  bool Delete(const DeleteEvent& e) const { return !del || del(e); }
  bool Generic(const GenericEvent& e) const { return !generic || generic(e); }
};

// Update events only when metadata.generation changed (spec changes, not status).
Predicate GenerationChangedPredicate();
// Update events only when metadata.resourceVersion changed (drops resync notifications).
Predicate ResourceVersionChangedPredicate();
Predicate LabelChangedPredicate();
Predicate AnnotationChangedPredicate();
// Every event type filtered by one function of the (new) object.
Predicate NewPredicateFuncs(std::function<bool(const api::Object&)> filter);

// All predicates pass.
bool PassCreate(const std::vector<Predicate>& ps, const CreateEvent& e);
bool PassUpdate(const std::vector<Predicate>& ps, const UpdateEvent& e);
bool PassDelete(const std::vector<Predicate>& ps, const DeleteEvent& e);
bool PassGeneric(const std::vector<Predicate>& ps, const GenericEvent& e);

}  // namespace kcm::runtime
