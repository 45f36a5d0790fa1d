// InternTable: hands out one shared Labels / OwnerReferences / SharedString / Annotations value
// per distinct content, so the pods of one ReplicaSet (same labels, same controller reference)
// share a single immutable set, and the pods of one node one node name. Owned by whoever decodes (a
// Decoder, or the ResourceListerWatcher that gives its LIST and WATCH decoders one table); never
// global. The table holds each value itself (8-byte counted pointers with no weak form): a sweep
// drops those only the table still holds, which frees them; it runs whenever a table has doubled
// since the last one (so each stays within twice the live values, amortised O(1)). Thread-safe:
// decoders on several threads may share one table (a mutex guards it); the values it returns are
// immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/shared_meta.h"

namespace kcm::api {

class InternTable {
 public:
  InternTable() = default;
  InternTable(const InternTable&) = delete;
  InternTable& operator=(const InternTable&) = delete;

  // `items`: decoded labels in any order, repeated keys allowed (the last wins); the views need
  // to live only for the call. Reorders *items.
  Labels InternLabels(std::vector<Labels::value_type>* items);
  OwnerReferences InternOwnerReferences(std::vector<OwnerReference>&& refs);
  // `text` needs to live only for the call; "" gives the empty (null) value.
  SharedString InternString(std::string_view text);
  // `items`: decoded annotations in any order, repeated keys allowed (the last wins, as a JSON
  // object read into a std::map); the views need to live only for the call. Reorders *items.
  Annotations InternAnnotations(std::vector<Labels::value_type>* items);

  struct Slots {
    size_t labels = 0;
    size_t owner_references = 0;
    size_t strings = 0;
    size_t annotations = 0;
  };
  // Slots in use, dead ones not yet swept included (tests, benchmarks).
  Slots SlotCount() const;
  // Drops the slots of sets no object refers to any more.
  void Sweep();

 private:
  static constexpr size_t kMinSweep = 64;
  // Content hash → value.
  template <typename Value>
  using Table = std::unordered_multimap<uint64_t, Value>;
  template <typename Value>
  static void SweepLocked(Table<Value>* table, size_t* sweep_at);
  void SweepStringsLocked();

  mutable std::mutex mu_;
  Table<Labels> labels_;                          // guarded by mu_
  Table<OwnerReferences> owner_references_;       // guarded by mu_
  size_t labels_sweep_at_ = kMinSweep;            // guarded by mu_
  size_t owner_references_sweep_at_ = kMinSweep;  // guarded by mu_
  // Keys view the string their value holds.
  std::unordered_map<std::string_view, SharedString> strings_;  // guarded by mu_
  size_t strings_sweep_at_ = kMinSweep;                         // guarded by mu_
  Table<Annotations> annotations_;                              // guarded by mu_
  size_t annotations_sweep_at_ = kMinSweep;                     // guarded by mu_
};

}  // namespace kcm::api
