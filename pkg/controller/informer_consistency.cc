#include "pkg/controller/informer_consistency.h"

namespace kcm::controller {

InformerConsistency::InformerConsistency(
    std::map<std::string, ConsistencyStore::LastSyncRVGetter> getters, const Informers& informers) {
  bool from_informers = getters.empty() && !informers.empty();
  for (const auto& [resource, informer] : informers) from_informers &= informer != nullptr;
  if (from_informers) {
    for (const auto& [resource, informer] : informers) {
      getters[resource] = [informer](std::string_view owner) {
        return informer->LastStoreSyncResourceVersionFor(owner);
      };
    }
  }
  if (getters.empty()) return;
  store_ = std::make_shared<ConsistencyStore>(std::move(getters));
  if (!from_informers) return;
  for (const auto& [resource, informer] : informers) {
    // Held weakly: a call already under way may finish after RemoveStoreSyncListener.
    const uint64_t id =
        informer->AddStoreSyncListener([weak = std::weak_ptr<ConsistencyStore>(store_)] {
          if (auto store = weak.lock()) store->StoresAdvanced();
        });
    listeners_.emplace_back(informer, id);
  }
}

InformerConsistency::~InformerConsistency() {
  RemoveListeners();
}

InformerConsistency::InformerConsistency(InformerConsistency&& other) noexcept
    : store_(std::move(other.store_)), listeners_(std::exchange(other.listeners_, {})) {}

InformerConsistency& InformerConsistency::operator=(InformerConsistency&& other) noexcept {
  if (this != &other) {
    RemoveListeners();
    store_ = std::move(other.store_);
    listeners_ = std::exchange(other.listeners_, {});
  }
  return *this;
}

void InformerConsistency::RemoveListeners() {
  for (const auto& [informer, id] : listeners_) informer->RemoveStoreSyncListener(id);
  listeners_.clear();
}

}  // namespace kcm::controller
