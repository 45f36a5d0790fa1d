#include "pkg/runtime/predicate.h"

namespace kcm::runtime {
namespace {

// Builds an update-only predicate from a comparison of old and new metadata.
Predicate UpdateWhen(std::function<bool(const api::ObjectMeta&, const api::ObjectMeta&)> changed) {
  Predicate p;
  p.update = [changed = std::move(changed)](const UpdateEvent& e) {
    if (!e.old_object || !e.new_object) return false;  // Malformed event: nothing to compare.
    return changed(e.old_object->Meta(), e.new_object->Meta());
  };
  return p;
}

}  // namespace

Predicate GenerationChangedPredicate() {
  return UpdateWhen([](const api::ObjectMeta& a, const api::ObjectMeta& b) {
    return a.generation != b.generation;
  });
}

Predicate ResourceVersionChangedPredicate() {
  return UpdateWhen([](const api::ObjectMeta& a, const api::ObjectMeta& b) {
    return a.resource_version != b.resource_version;
  });
}

Predicate LabelChangedPredicate() {
  return UpdateWhen(
      [](const api::ObjectMeta& a, const api::ObjectMeta& b) { return a.labels != b.labels; });
}

Predicate AnnotationChangedPredicate() {
  return UpdateWhen([](const api::ObjectMeta& a, const api::ObjectMeta& b) {
    return a.annotations != b.annotations;
  });
}

Predicate NewPredicateFuncs(std::function<bool(const api::Object&)> filter) {
  Predicate p;
  p.create = [filter](const CreateEvent& e) { return e.object && filter(*e.object); };
  p.update = [filter](const UpdateEvent& e) { return e.new_object && filter(*e.new_object); };
  p.del = [filter](const DeleteEvent& e) { return e.object && filter(*e.object); };
  p.generic = [filter](const GenericEvent& e) { return e.object && filter(*e.object); };
  return p;
}

bool PassCreate(const std::vector<Predicate>& ps, const CreateEvent& e) {
  for (const auto& p : ps) {
    if (!p.Create(e)) return false;
  }
  return true;
}
bool PassUpdate(const std::vector<Predicate>& ps, const UpdateEvent& e) {
  for (const auto& p : ps) {
    if (!p.Update(e)) return false;
  }
  return true;
}
bool PassDelete(const std::vector<Predicate>& ps, const DeleteEvent& e) {
  for (const auto& p : ps) {
    if (!p.Delete(e)) return false;
  }
  return true;
}
bool PassGeneric(const std::vector<Predicate>& ps, const GenericEvent& e) {
  for (const auto& p : ps) {
    if (!p.Generic(e)) return false;
  }
  return true;
}

}  // namespace kcm::runtime
