// ServedRanges: a replica's share of the namespaces served by the one set of controllers it runs
// for its whole life (docs/design/sharding.md, "Serving a share"). Each range
// gained is a shard of the controllers' informer factory (a source per namespaced
// informer, added pods first, then ReplicaSets, then Deployments, each synced before the next)
// whose writes the NamespaceFence admits from the start; a range stopped is closed in the fence —
// this returns once none of its writes is in flight — and only then leaves the caches, a delete
// for each object. Thread-compatible (the ShardManager's loop); `failed` runs on a set's sync
// thread.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/controller/namespace_fence.h"
#include "pkg/informers/shared_informer_factory.h"
#include "pkg/sharding/serving.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::sharding {

class ServedRanges final : public Serving {
 public:
  // `factory` was made with shard_sources and outlives this; `controllers` stops the controllers
  // and fences their writes (their WriteFence's token); `failed`: a set's sources could not be
  // added (the factory shut down).
  ServedRanges(informers::SharedInformerFactory& factory,
               std::shared_ptr<controller::NamespaceFence> fence, std::stop_source controllers,
               std::function<void(Error)> failed);
  ~ServedRanges() override { StopAll(); }
  ServedRanges(const ServedRanges&) = delete;
  ServedRanges& operator=(const ServedRanges&) = delete;

  void Reconcile(const std::vector<api::ShardRange>& served) override;
  void StopIntersecting(const std::vector<api::ShardRange>& ranges) override;
  void StopAll() override;
  void StopForGood() override { controllers_.request_stop(); }

 private:
  struct Set {
    std::vector<api::ShardRange> ranges;
    std::string name;   // its shard in the factory
    std::jthread sync;  // adds its sources; ends once they synced or the set stopped
  };
  void Start(std::vector<api::ShardRange> ranges);
  void Stop(std::list<Set>::iterator it);

  informers::SharedInformerFactory& factory_;
  const std::shared_ptr<controller::NamespaceFence> fence_;
  std::stop_source controllers_;
  const std::function<void(Error)> failed_;
  uint64_t next_ = 0;
  std::list<Set> sets_;
};

}  // namespace kcm::sharding
