// Sources feed events into a controller's queue through a handler and predicates
// (controller-runtime's source package). Start is called once per Watch, from the controller's
// thread; the source delivers on its own threads.
#pragma once

#include <memory>
#include <stop_token>
#include <vector>

#include "pkg/runtime/handler.h"
#include "pkg/runtime/predicate.h"
#include "pkg/util/result.h"

namespace kcm::runtime {

class Source {
 public:
  virtual ~Source() = default;
  // Begins delivering events to `handler` (after `predicates`) into `queue`; must not block.
  // Delivery ends when `stop` is requested or the source is destroyed.
  virtual Status Start(std::stop_token stop, std::shared_ptr<EventHandler> handler,
                       std::vector<Predicate> predicates, Queue& queue) = 0;
  // Blocks until the source's cache is synced (true), or `stop` is requested (false).
  virtual bool WaitForSync(std::stop_token stop) = 0;
};

}  // namespace kcm::runtime
