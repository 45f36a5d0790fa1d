// Expectations (R2): how many pod creations and deletions a controller is still waiting to
// see in its informer before it trusts the cache enough to manage replicas again. Every method is
// thread-safe (controller workers and informer handlers call them concurrently).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/util/clock.h"

namespace kcm::controller {

// A record older than this is treated as satisfied: a missed watch event must not wedge the
// controller forever (upstream ExpectationsTimeout).
inline constexpr std::chrono::minutes kExpectationsTimeout{5};

// A snapshot of one controller's record (upstream ControlleeExpectations).
struct ControlleeExpectations {
  int64_t add = 0;
  int64_t del = 0;
  Clock::time_point timestamp;

  // Both counters are at or below zero: everything expected has been observed.
  bool Fulfilled() const { return add <= 0 && del <= 0; }
};

// ControllerExpectations keeps one record per controller key ("namespace/name").
class ControllerExpectations {
 public:
  explicit ControllerExpectations(const Clock& clock) : clock_(clock) {}

  ControllerExpectations(const ControllerExpectations&) = delete;
  ControllerExpectations& operator=(const ControllerExpectations&) = delete;

  // The record for `key`, if any (a copy).
  std::optional<ControlleeExpectations> GetExpectations(std::string_view key) const;

  // True when the controller may act: no record, the record is fulfilled, or it expired
  // (logged at V(4)).
  bool SatisfiedExpectations(std::string_view key) const;

  // Replace the record with fresh counters and a new timestamp.
  void SetExpectations(std::string_view key, int64_t add, int64_t del);
  void ExpectCreations(std::string_view key, int64_t adds) { SetExpectations(key, adds, 0); }
  void ExpectDeletions(std::string_view key, int64_t dels) { SetExpectations(key, 0, dels); }

  // Adjust an existing record (no-op without one). The timestamp is kept: only Set* restarts
  // the TTL, as upstream.
  void LowerExpectations(std::string_view key, int64_t add, int64_t del);
  void RaiseExpectations(std::string_view key, int64_t add, int64_t del);
  void CreationObserved(std::string_view key) { LowerExpectations(key, 1, 0); }
  void DeletionObserved(std::string_view key) { LowerExpectations(key, 0, 1); }

  void DeleteExpectations(std::string_view key);

 private:
  bool IsExpired(const ControlleeExpectations& exp) const;

  const Clock& clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, ControlleeExpectations> records_;
};

// UIDTrackingControllerExpectations: deletions are tracked by the set of pod keys the controller
// deleted, so a deletion event for a pod it did not delete (or a second event for the same pod)
// does not lower the count (R2). Creations behave as in ControllerExpectations.
class UIDTrackingControllerExpectations {
 public:
  explicit UIDTrackingControllerExpectations(const Clock& clock) : expectations_(clock) {}

  UIDTrackingControllerExpectations(const UIDTrackingControllerExpectations&) = delete;
  UIDTrackingControllerExpectations& operator=(const UIDTrackingControllerExpectations&) = delete;

  std::optional<ControlleeExpectations> GetExpectations(std::string_view key) const {
    return expectations_.GetExpectations(key);
  }
  bool SatisfiedExpectations(std::string_view key) const {
    return expectations_.SatisfiedExpectations(key);
  }
  void ExpectCreations(std::string_view key, int64_t adds) {
    expectations_.ExpectCreations(key, adds);
  }
  void CreationObserved(std::string_view key) { expectations_.CreationObserved(key); }
  void LowerExpectations(std::string_view key, int64_t add, int64_t del) {
    expectations_.LowerExpectations(key, add, del);
  }
  void RaiseExpectations(std::string_view key, int64_t add, int64_t del) {
    expectations_.RaiseExpectations(key, add, del);
  }

  // Expect the deletion of exactly these pods ("namespace/name" keys); replaces any earlier
  // set (an unfinished earlier set is logged, as upstream: it means a sync raced a deletion).
  void ExpectDeletions(std::string_view key, const std::vector<std::string>& deleted_keys);
  // Counts `deleted_key` once, and only if it is in the expected set.
  void DeletionObserved(std::string_view key, std::string_view deleted_key);
  // The pod keys still expected to be deleted (empty when none).
  std::set<std::string> GetUIDs(std::string_view key) const;
  void DeleteExpectations(std::string_view key);

 private:
  ControllerExpectations expectations_;
  // Guards uids_ and keeps set + counter updates atomic together; taken before expectations_'s.
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::set<std::string, std::less<>>> uids_;
};

}  // namespace kcm::controller
