// InformerConsistency: a controller's ConsistencyStore vouched for by its informers, as
// upstream's controllers build theirs (consistencyStore fed from each informer's
// LastStoreSyncResourceVersion): one getter per informer's group resource, and a store-sync
// listener on each so that a move of either watermark may let waiting owners sync. Owns those
// listeners and removes them when it goes; the informers must outlive it. Movable, not copyable.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pkg/cache/shared_informer.h"
#include "pkg/controller/consistency.h"

namespace kcm::controller {

class InformerConsistency {
 public:
  using Informers = std::map<std::string, std::shared_ptr<cache::SharedIndexInformer>>;

  // No store: nothing is recorded or waited for.
  InformerConsistency() = default;
  // `getters` given (tests) are the store's as they are, with no listener; else, when every one
  // of `informers` (group resource → informer) is there, their watermarks and listeners. With
  // neither there is no store.
  InformerConsistency(std::map<std::string, ConsistencyStore::LastSyncRVGetter> getters,
                      const Informers& informers);
  ~InformerConsistency();
  InformerConsistency(InformerConsistency&& other) noexcept;
  InformerConsistency& operator=(InformerConsistency&& other) noexcept;
  InformerConsistency(const InformerConsistency&) = delete;
  InformerConsistency& operator=(const InformerConsistency&) = delete;

  explicit operator bool() const { return store_ != nullptr; }
  ConsistencyStore* operator->() const { return store_.get(); }
  ConsistencyStore* get() const { return store_.get(); }

 private:
  void RemoveListeners();

  std::shared_ptr<ConsistencyStore> store_;
  std::vector<std::pair<std::shared_ptr<cache::SharedIndexInformer>, uint64_t>> listeners_;
};

}  // namespace kcm::controller
