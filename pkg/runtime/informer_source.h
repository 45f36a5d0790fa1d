// InformerSource: a controller's watch on a shared informer (controller-runtime's source.Kind).
// Each Start registers one handler on the informer; WaitForSync waits for the informer and that
// registration to have delivered the initial list. Informer notifications arrive on the informer's
// listener threads.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "pkg/cache/shared_informer.h"
#include "pkg/runtime/source.h"
#include "pkg/util/clock.h"

namespace kcm::runtime {

class InformerSource final : public Source {
 public:
  explicit InformerSource(std::shared_ptr<cache::SharedIndexInformer> informer,
                          Clock* clock = nullptr);
  ~InformerSource() override;

  Status Start(std::stop_token stop, std::shared_ptr<EventHandler> handler,
               std::vector<Predicate> predicates, Queue& queue) override;
  bool WaitForSync(std::stop_token stop) override;

 private:
  std::shared_ptr<cache::SharedIndexInformer> informer_;
  Clock& clock_;
  std::mutex mu_;
  std::vector<std::shared_ptr<cache::ResourceEventHandlerRegistration>> registrations_;
};

}  // namespace kcm::runtime
