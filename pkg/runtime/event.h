// The events sources deliver to handlers (controller-runtime's event package). Objects are the
// immutable shared cache objects. Plain data.
#pragma once

#include "pkg/api/object.h"

namespace kcm::runtime {

struct CreateEvent {
  api::ObjectPtr object;
  bool is_in_initial_list = false;
};

struct UpdateEvent {
  api::ObjectPtr old_object;
  api::ObjectPtr new_object;
};

struct DeleteEvent {
  // The last known state; when the watch missed the deletion this is the object from the
  // DeletedFinalStateUnknown tombstone and delete_state_unknown is true.
  api::ObjectPtr object;
  bool delete_state_unknown = false;
};

// An event from outside the cluster (a channel source), or a periodic nudge.
struct GenericEvent {
  api::ObjectPtr object;
};

}  // namespace kcm::runtime
