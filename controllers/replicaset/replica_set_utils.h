// The ReplicaSet controller's status helpers (upstream replica_set_utils.go): calculateStatus,
// updateReplicaSetStatus, the ReplicaFailure condition helpers, and the next time a Ready pod
// becomes available (R15). Pure functions except UpdateReplicaSetStatus (one API write, plus one
// GET and retry on failure); thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/api/replicaset.h"
#include "pkg/controller/active_pods.h"
#include "pkg/controller/typed_client.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::replicaset {

using controller::PodPtr;
using controller::ReplicaSetClient;
using controller::ReplicaSetPtr;

// The condition type upstream adds when creating or deleting pods fails, and its reasons (R14).
inline constexpr std::string_view kReplicaFailure = "ReplicaFailure";
inline constexpr std::string_view kFailedCreateReason = "FailedCreate";
inline constexpr std::string_view kFailedDeleteReason = "FailedDelete";

// How many times a failed status write is retried after re-reading the ReplicaSet.
inline constexpr int kStatusUpdateRetries = 1;

api::Condition NewReplicaSetCondition(std::string_view type, std::string_view status,
                                      std::string_view reason, std::string message, api::Time now);
// The condition of `type`, or null.
const api::Condition* GetCondition(const api::ReplicaSetStatus& status, std::string_view type);
// Adds `condition`, replacing one of the same type, unless one with the same status and reason is
// already there (then nothing changes, lastTransitionTime included).
void SetCondition(api::ReplicaSetStatus& status, api::Condition condition);
void RemoveCondition(api::ReplicaSetStatus& status, std::string_view type);

struct CalculateStatusInput {
  // Active pods claimed by the ReplicaSet (R10).
  const std::vector<PodPtr>* filtered_pods = nullptr;
  // Claimed pods being deleted but not finished; nullopt when terminatingReplicas is not tracked
  // (the API server does not know the field).
  std::optional<int32_t> terminating_replicas;
  // The outcome of manageReplicas (ok when it did nothing or succeeded).
  const Status* manage_replicas_status = nullptr;
  api::Time now;
};

// R14: the new status from the ReplicaSet's current status and its pods. observedGeneration is
// left as read (UpdateReplicaSetStatus sets it).
api::ReplicaSetStatus CalculateStatus(const api::ReplicaSet& rs, const CalculateStatusInput& in);

// True when writing `status` would change nothing (counts, conditions, and observedGeneration
// already equal to metadata.generation).
bool StatusUpToDate(const api::ReplicaSet& rs, const api::ReplicaSetStatus& status);

// R14: writes `status` (with observedGeneration = generation) unless nothing changed; on failure
// re-reads the ReplicaSet once and retries. Returns the ReplicaSet as stored (or `rs` when
// unchanged).
Result<ReplicaSetPtr> UpdateReplicaSetStatus(ReplicaSetClient& client, ReplicaSetPtr rs,
                                             api::ReplicaSetStatus status);

// R15: how long until the first Ready pod that is not yet available becomes available, given
// minReadySeconds; nullopt when none will (minReadySeconds 0, or no such pod).
std::optional<Clock::duration> NextAvailabilityCheck(const std::vector<PodPtr>& pods,
                                                     int32_t min_ready_seconds, api::Time now);

// The selector of `rs`, or an error for a ReplicaSet we must not act on: a selector that does not
// parse, or a null/empty one (the API server refuses both for apps/v1; acting on them would claim
// nothing or everything).
Result<api::labels::Selector> SelectorOf(const api::ReplicaSet& rs);

}  // namespace kcm::replicaset
