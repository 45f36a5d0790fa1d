// Deployment helpers (upstream pkg/controller/deployment/util): annotations and revisions (D5),
// rolling-update bounds (D6, D7), proportional-scaling fractions (D9), conditions (D13, D14) and
// replica counting (D15). Pure functions over immutable objects; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/deployment.h"
#include "pkg/api/replicaset.h"
#include "pkg/util/result.h"

namespace kcm::deployment::util {

using ReplicaSetPtr = std::shared_ptr<const api::ReplicaSet>;
using ReplicaSets = std::vector<ReplicaSetPtr>;

// Annotations (D5, D12).
inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
inline constexpr std::string_view kRollbackToAnnotation = "deprecated.deployment.rollback.to";
inline constexpr std::string_view kLastAppliedConfigAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";
// Upper bound on the length of the revision-history annotation.
inline constexpr size_t kMaxRevHistoryLengthInChars = 2000;

// Condition types and reasons (D13, D14).
inline constexpr std::string_view kConditionAvailable = "Available";
inline constexpr std::string_view kConditionProgressing = "Progressing";
inline constexpr std::string_view kConditionReplicaFailure = "ReplicaFailure";
inline constexpr std::string_view kNewReplicaSetReason = "NewReplicaSetCreated";
inline constexpr std::string_view kFoundNewRSReason = "FoundNewReplicaSet";
inline constexpr std::string_view kReplicaSetUpdatedReason = "ReplicaSetUpdated";
inline constexpr std::string_view kTimedOutReason = "ProgressDeadlineExceeded";
inline constexpr std::string_view kPausedDeployReason = "DeploymentPaused";
inline constexpr std::string_view kResumedDeployReason = "DeploymentResumed";
inline constexpr std::string_view kNewRSAvailableReason = "NewReplicaSetAvailable";
inline constexpr std::string_view kFailedRSCreateReason = "ReplicaSetCreateError";
inline constexpr std::string_view kMinimumReplicasAvailable = "MinimumReplicasAvailable";
inline constexpr std::string_view kMinimumReplicasUnavailable = "MinimumReplicasUnavailable";
// Rollback event reasons (D12).
inline constexpr std::string_view kRollbackRevisionNotFound = "DeploymentRollbackRevisionNotFound";
inline constexpr std::string_view kRollbackTemplateUnchanged =
    "DeploymentRollbackTemplateUnchanged";
inline constexpr std::string_view kRollbackDone = "DeploymentRollback";

// --- conditions -----------------------------------------------------------------------------

api::Condition NewDeploymentCondition(std::string_view type, std::string_view status,
                                      std::string_view reason, std::string message, api::Time now);
const api::Condition* GetDeploymentCondition(const api::DeploymentStatus& status,
                                             std::string_view type);
// Sets `condition`: no change when one of its type has the same status and reason; the
// lastTransitionTime of an existing condition with the same status is kept (D14).
void SetDeploymentCondition(api::DeploymentStatus& status, api::Condition condition);
void RemoveDeploymentCondition(api::DeploymentStatus& status, std::string_view type);
// An RS's condition as a Deployment condition (both times = the RS condition's transition time).
api::Condition ReplicaSetToDeploymentCondition(const api::Condition& rs_condition);

// --- revisions and annotations (D5) ---------------------------------------------------------

// The RS's revision annotation; 0 when absent or unparsable.
int64_t RevisionOf(const api::ReplicaSet& rs);
int64_t MaxRevision(const ReplicaSets& rss);
// The second-highest revision (the one before the current), 0 when there is none.
int64_t LastRevision(const ReplicaSets& rss);
// Sets the Deployment's revision annotation; true when it changed.
bool SetDeploymentRevision(std::map<std::string, std::string>& deployment_annotations,
                           const std::string& revision);
// Annotations never copied between a Deployment and its ReplicaSets.
bool SkipCopyAnnotation(std::string_view key);
// D5: copies the Deployment's annotations, raises the revision to `new_revision` (moving the old
// one into revision-history when the RS already had one) and, for an RS about to be created
// (`exists` false), adds desired/max-replicas. True when `rs_annotations` changed.
bool SetNewReplicaSetAnnotations(const api::Deployment& d,
                                 std::map<std::string, std::string>& rs_annotations,
                                 const std::string& new_revision, bool exists,
                                 size_t rev_history_limit_in_chars = kMaxRevHistoryLengthInChars);
// Rollback: the Deployment keeps only its skipped annotations plus the RS's non-skipped ones.
std::map<std::string, std::string> DeploymentAnnotationsFromReplicaSet(
    const std::map<std::string, std::string>& deployment_annotations, const api::ReplicaSet& rs);

std::optional<int32_t> GetDesiredReplicasAnnotation(const api::ReplicaSet& rs);
std::optional<int32_t> GetMaxReplicasAnnotation(const api::ReplicaSet& rs);
// The desired/max-replicas annotations set to the given values; true when they changed.
bool SetReplicasAnnotations(std::map<std::string, std::string>& annotations, int32_t desired,
                            int32_t max_replicas);
bool ReplicasAnnotationsNeedUpdate(const api::ReplicaSet& rs, int32_t desired,
                                   int32_t max_replicas);

// --- strategy arithmetic (D6, D7, D9) -------------------------------------------------------

bool IsRollingUpdate(const api::Deployment& d);
// D6: maxSurge (% rounds up) and maxUnavailable (% rounds down) of `desired`; both 0 → 1
// unavailable. Absent values are the API defaults (25%).
struct Fenceposts {
  int32_t max_surge = 0;
  int32_t max_unavailable = 0;
};
Result<Fenceposts> ResolveFenceposts(const std::optional<api::IntOrString>& max_surge,
                                     const std::optional<api::IntOrString>& max_unavailable,
                                     int32_t desired);
// 0 for Recreate; invalid values (rejected by API validation) read as 0 and are logged.
int32_t MaxSurge(const api::Deployment& d);
// 0 for Recreate or 0 replicas; capped at spec.replicas.
int32_t MaxUnavailable(const api::Deployment& d);
// D7: the size the new RS may grow to now.
Result<int32_t> NewRSNewReplicas(const api::Deployment& d, const ReplicaSets& all_rss,
                                 const api::ReplicaSet& new_rs);
// D9: how many of the replicas still to add (or remove, negative) this RS takes.
int32_t GetProportion(const api::ReplicaSet* rs, const api::Deployment& d,
                      int32_t deployment_replicas_to_add, int32_t deployment_replicas_added);
// The new RS has all replicas available and carries the current desired-replicas annotation.
bool IsSaturated(const api::Deployment& d, const api::ReplicaSet* rs);

// --- finding ReplicaSets (D3) ---------------------------------------------------------------

// D3: the oldest RS whose template equals the Deployment's ignoring pod-template-hash.
ReplicaSetPtr FindNewReplicaSet(const api::Deployment& d, const ReplicaSets& rss);
// Every RS except the new one.
ReplicaSets FindOldReplicaSets(const api::Deployment& d, const ReplicaSets& rss,
                               const ReplicaSetPtr& new_rs);
// RSs with spec.replicas > 0 (nulls dropped).
ReplicaSets FilterActiveReplicaSets(const ReplicaSets& rss);
// The only active RS; with none active, the newest (new RS included); null when several active.
ReplicaSetPtr FindActiveOrLatest(const ReplicaSetPtr& new_rs, const ReplicaSets& old_rss);

// --- counting (D15) -------------------------------------------------------------------------

int32_t GetReplicaCountForReplicaSets(const ReplicaSets& rss);        // Σ spec.replicas
int32_t GetActualReplicaCountForReplicaSets(const ReplicaSets& rss);  // Σ status.replicas
int32_t GetReadyReplicaCountForReplicaSets(const ReplicaSets& rss);
int32_t GetAvailableReplicaCountForReplicaSets(const ReplicaSets& rss);
std::optional<int32_t> GetTerminatingReplicaCountForReplicaSets(const ReplicaSets& rss);

// --- progress (D13) -------------------------------------------------------------------------

bool HasProgressDeadline(const api::Deployment& d);
bool HasRevisionHistoryLimit(const api::Deployment& d);
// All replicas updated and available, and the status observed the latest generation.
bool DeploymentComplete(const api::Deployment& d, const api::DeploymentStatus& new_status);
// The new status shows progress over the Deployment's current status.
bool DeploymentProgressing(const api::Deployment& d, const api::DeploymentStatus& new_status);
// The Progressing condition's lastUpdateTime + deadline is before `now`.
bool DeploymentTimedOut(const api::Deployment& d, const api::DeploymentStatus& new_status,
                        api::Time now);

// The rollback target revision from the annotation (D12); nullopt when absent or invalid.
std::optional<int64_t> GetRollbackTo(const api::Deployment& d);

}  // namespace kcm::deployment::util
