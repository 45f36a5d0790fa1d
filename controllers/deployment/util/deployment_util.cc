#include "controllers/deployment/util/deployment_util.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>

#include "pkg/api/pod_template.h"
#include "pkg/controller/replicaset_sorting.h"
#include "pkg/util/klog.h"

namespace kcm::deployment::util {

namespace {

template <typename Int>
std::optional<Int> ParseInt(std::string_view s) {
  Int v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int32_t> IntFromAnnotation(const api::ReplicaSet& rs, std::string_view key) {
  auto it = rs.metadata.annotations.find(std::string(key));
  if (it == rs.metadata.annotations.end()) return std::nullopt;
  std::optional<int32_t> v = ParseInt<int32_t>(it->second);
  if (!v) {
    KLOG_V_INFOS(2, "Cannot convert annotation value to an int", "annotation", key, "value",
                 it->second, "replicaSet", klog::KRef(rs.metadata.namespace_, rs.metadata.name));
  }
  return v;
}

}  // namespace

api::Condition NewDeploymentCondition(std::string_view type, std::string_view status,
                                      std::string_view reason, std::string message, api::Time now) {
  api::Condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = std::move(message);
  // metav1.Time has second resolution; truncate so a status read back compares equal.
  now = std::chrono::time_point_cast<std::chrono::seconds>(now);
  c.last_update_time = now;
  c.last_transition_time = now;
  return c;
}

const api::Condition* GetDeploymentCondition(const api::DeploymentStatus& status,
                                             std::string_view type) {
  for (const auto& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void SetDeploymentCondition(api::DeploymentStatus& status, api::Condition condition) {
  const api::Condition* current = GetDeploymentCondition(status, condition.type);
  if (current != nullptr && current->status == condition.status &&
      current->reason == condition.reason) {
    return;
  }
  if (current != nullptr && current->status == condition.status) {
    condition.last_transition_time = current->last_transition_time;
  }
  RemoveDeploymentCondition(status, condition.type);
  status.conditions.push_back(std::move(condition));
}

void RemoveDeploymentCondition(api::DeploymentStatus& status, std::string_view type) {
  std::erase_if(status.conditions, [&](const api::Condition& c) { return c.type == type; });
}

api::Condition ReplicaSetToDeploymentCondition(const api::Condition& rs_condition) {
  api::Condition c = rs_condition;
  c.last_update_time = rs_condition.last_transition_time;
  return c;
}

int64_t RevisionOf(const api::ReplicaSet& rs) {
  Result<int64_t> v = controller::Revision(rs.metadata);
  if (!v.ok()) {
    KLOG_V_INFOS(4, "Couldn't parse revision", "replicaSet",
                 klog::KRef(rs.metadata.namespace_, rs.metadata.name), "err", v.error().ToString());
    return 0;
  }
  return *v;
}

int64_t MaxRevision(const ReplicaSets& rss) {
  int64_t max = 0;
  for (const auto& rs : rss) {
    if (rs) max = std::max(max, RevisionOf(*rs));
  }
  return max;
}

int64_t LastRevision(const ReplicaSets& rss) {
  int64_t max = 0;
  int64_t second = 0;
  for (const auto& rs : rss) {
    if (!rs) continue;
    int64_t v = RevisionOf(*rs);
    if (v >= max) {
      second = max;
      max = v;
    } else if (v > second) {
      second = v;
    }
  }
  return second;
}

bool SetDeploymentRevision(std::map<std::string, std::string>& deployment_annotations,
                           const std::string& revision) {
  std::string& current = deployment_annotations[std::string(kRevisionAnnotation)];
  if (current == revision) return false;
  current = revision;
  return true;
}

bool SkipCopyAnnotation(std::string_view key) {
  return key == kLastAppliedConfigAnnotation || key == kRevisionAnnotation ||
         key == kRevisionHistoryAnnotation || key == kDesiredReplicasAnnotation ||
         key == kMaxReplicasAnnotation || key == kRollbackToAnnotation;
}

bool SetNewReplicaSetAnnotations(const api::Deployment& d,
                                 std::map<std::string, std::string>& rs_annotations,
                                 const std::string& new_revision, bool exists,
                                 size_t rev_history_limit_in_chars) {
  bool changed = false;
  for (const auto& [k, v] : d.metadata.annotations) {
    if (SkipCopyAnnotation(k)) continue;
    auto it = rs_annotations.find(k);
    if (it != rs_annotations.end() && it->second == v) continue;
    rs_annotations[k] = v;
    changed = true;
  }
  auto old_it = rs_annotations.find(std::string(kRevisionAnnotation));
  const bool had_revision = old_it != rs_annotations.end();
  const std::string old_revision = had_revision ? old_it->second : "";
  int64_t old_revision_int = 0;
  if (!old_revision.empty()) {
    std::optional<int64_t> parsed = ParseInt<int64_t>(old_revision);
    if (!parsed) {
      KLOG_WARNINGS("Updating replica set revision OldRevision not int", "oldRevision",
                    old_revision);
      return false;
    }
    old_revision_int = *parsed;
  }
  std::optional<int64_t> new_revision_int = ParseInt<int64_t>(new_revision);
  if (!new_revision_int) {
    KLOG_WARNINGS("Updating replica set revision NewRevision not int", "newRevision", new_revision);
    return false;
  }
  if (old_revision_int < *new_revision_int) {
    rs_annotations[std::string(kRevisionAnnotation)] = new_revision;
    changed = true;
    // An RS that already had a revision and gets a newer one is being rolled back to: keep its
    // earlier revisions for `kubectl rollout history`.
    if (had_revision) {
      std::string& history = rs_annotations[std::string(kRevisionHistoryAnnotation)];
      if (history.empty()) {
        history = old_revision;
      } else {
        std::vector<std::string> parts;
        size_t start = 0;
        while (true) {
          size_t comma = history.find(',', start);
          parts.push_back(history.substr(start, comma - start));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        size_t total = history.size() + old_revision.size() + 1;
        size_t first = 0;
        while (total > rev_history_limit_in_chars && first < parts.size()) {
          total -= parts[first].size() + 1;
          ++first;
        }
        if (total <= rev_history_limit_in_chars) {
          std::string joined;
          for (size_t i = first; i < parts.size(); ++i) joined += parts[i] + ",";
          history = joined + old_revision;
        } else {
          KLOG_WARNINGS("Not appending revision due to revision history length limit reached");
        }
      }
    }
  }
  if (!exists &&
      SetReplicasAnnotations(rs_annotations, d.spec.replicas, d.spec.replicas + MaxSurge(d))) {
    changed = true;
  }
  return changed;
}

std::map<std::string, std::string> DeploymentAnnotationsFromReplicaSet(
    const std::map<std::string, std::string>& deployment_annotations, const api::ReplicaSet& rs) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : deployment_annotations) {
    if (SkipCopyAnnotation(k)) out[k] = v;
  }
  for (const auto& [k, v] : rs.metadata.annotations) {
    if (!SkipCopyAnnotation(k)) out[k] = v;
  }
  return out;
}

std::optional<int32_t> GetDesiredReplicasAnnotation(const api::ReplicaSet& rs) {
  return IntFromAnnotation(rs, kDesiredReplicasAnnotation);
}

std::optional<int32_t> GetMaxReplicasAnnotation(const api::ReplicaSet& rs) {
  return IntFromAnnotation(rs, kMaxReplicasAnnotation);
}

bool SetReplicasAnnotations(std::map<std::string, std::string>& annotations, int32_t desired,
                            int32_t max_replicas) {
  bool changed = false;
  for (auto [key, value] : {std::pair{kDesiredReplicasAnnotation, desired},
                            std::pair{kMaxReplicasAnnotation, max_replicas}}) {
    std::string text = std::to_string(value);
    std::string& slot = annotations[std::string(key)];
    if (slot != text) {
      slot = std::move(text);
      changed = true;
    }
  }
  return changed;
}

bool ReplicasAnnotationsNeedUpdate(const api::ReplicaSet& rs, int32_t desired,
                                   int32_t max_replicas) {
  const auto& a = rs.metadata.annotations;
  auto d = a.find(std::string(kDesiredReplicasAnnotation));
  auto m = a.find(std::string(kMaxReplicasAnnotation));
  return d == a.end() || d->second != std::to_string(desired) || m == a.end() ||
         m->second != std::to_string(max_replicas);
}

bool IsRollingUpdate(const api::Deployment& d) {
  return d.spec.strategy.type == "RollingUpdate";
}

Result<Fenceposts> ResolveFenceposts(const std::optional<api::IntOrString>& max_surge,
                                     const std::optional<api::IntOrString>& max_unavailable,
                                     int32_t desired) {
  static const api::IntOrString kDefault = api::IntOrString::FromString("25%");
  const api::IntOrString& surge_value = max_surge ? *max_surge : kDefault;
  const api::IntOrString& unavailable_value = max_unavailable ? *max_unavailable : kDefault;
  Result<int> surge = api::GetScaledValueFromIntOrPercent(&surge_value, desired, true);
  if (!surge.ok()) return surge.error();
  Result<int> unavailable = api::GetScaledValueFromIntOrPercent(&unavailable_value, desired, false);
  if (!unavailable.ok()) return unavailable.error();
  Fenceposts f{static_cast<int32_t>(*surge), static_cast<int32_t>(*unavailable)};
  // Both zero would block the rollout: allow one unavailable pod instead.
  if (f.max_surge == 0 && f.max_unavailable == 0) f.max_unavailable = 1;
  return f;
}

namespace {
Fenceposts DeploymentFenceposts(const api::Deployment& d) {
  const auto& ru = d.spec.strategy.rolling_update;
  Result<Fenceposts> f = ResolveFenceposts(
      ru ? ru->max_surge : std::nullopt, ru ? ru->max_unavailable : std::nullopt, d.spec.replicas);
  if (!f.ok()) {
    KLOG_WARNINGS("Deployment has invalid rolling update bounds", "deployment",
                  klog::KRef(d.metadata.namespace_, d.metadata.name), "err", f.error().ToString());
    return Fenceposts{};
  }
  return *f;
}
}  // namespace

int32_t MaxSurge(const api::Deployment& d) {
  if (!IsRollingUpdate(d)) return 0;
  return DeploymentFenceposts(d).max_surge;
}

int32_t MaxUnavailable(const api::Deployment& d) {
  if (!IsRollingUpdate(d) || d.spec.replicas == 0) return 0;
  return std::min(DeploymentFenceposts(d).max_unavailable, d.spec.replicas);
}

Result<int32_t> NewRSNewReplicas(const api::Deployment& d, const ReplicaSets& all_rss,
                                 const api::ReplicaSet& new_rs) {
  if (d.spec.strategy.type == "Recreate") return d.spec.replicas;
  if (!IsRollingUpdate(d)) {
    return Error::Local("InvalidArgument",
                        "deployment type " + d.spec.strategy.type + " isn't supported");
  }
  const int32_t current = GetReplicaCountForReplicaSets(all_rss);
  const int32_t max_total = d.spec.replicas + MaxSurge(d);
  if (current >= max_total) return new_rs.spec.replicas;  // cannot scale up
  int32_t scale_up = max_total - current;
  scale_up = std::min(scale_up, d.spec.replicas - new_rs.spec.replicas);
  return new_rs.spec.replicas + scale_up;
}

namespace {
// The RS's share of the Deployment's new size, minus its current size (D9).
int32_t GetReplicaSetFraction(const api::ReplicaSet& rs, const api::Deployment& d) {
  if (d.spec.replicas == 0) return -rs.spec.replicas;
  const int32_t deployment_replicas = d.spec.replicas + MaxSurge(d);
  std::optional<int32_t> annotated = GetMaxReplicasAnnotation(rs);
  // Without the annotation, the Deployment's current size is the best guess of the old size.
  int32_t old_size = annotated ? *annotated : d.status.replicas;
  if (old_size == 0) return 0;  // nothing to scale proportionally against
  double new_size = static_cast<double>(rs.spec.replicas) * deployment_replicas / old_size;
  return static_cast<int32_t>(std::round(new_size)) - rs.spec.replicas;
}
}  // namespace

int32_t GetProportion(const api::ReplicaSet* rs, const api::Deployment& d,
                      int32_t deployment_replicas_to_add, int32_t deployment_replicas_added) {
  if (rs == nullptr || rs->spec.replicas == 0 || deployment_replicas_to_add == 0 ||
      deployment_replicas_to_add == deployment_replicas_added) {
    return 0;
  }
  const int32_t fraction = GetReplicaSetFraction(*rs, d);
  const int32_t allowed = deployment_replicas_to_add - deployment_replicas_added;
  // Never hand out more than what is left to add (or remove).
  return deployment_replicas_to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
}

bool IsSaturated(const api::Deployment& d, const api::ReplicaSet* rs) {
  if (rs == nullptr) return false;
  std::optional<int32_t> desired = GetDesiredReplicasAnnotation(*rs);
  if (!desired) return false;
  return rs->spec.replicas == d.spec.replicas && *desired == d.spec.replicas &&
         rs->status.available_replicas == d.spec.replicas;
}

ReplicaSetPtr FindNewReplicaSet(const api::Deployment& d, const ReplicaSets& rss) {
  ReplicaSets sorted = rss;
  std::stable_sort(sorted.begin(), sorted.end(), controller::ReplicaSetsByCreationTimestamp{});
  for (const auto& rs : sorted) {
    Result<bool> eq = api::EqualIgnoreHash(rs->spec.pod_template, d.spec.pod_template);
    if (!eq.ok()) {
      KLOG_WARNINGS("Comparing a ReplicaSet's template failed", "replicaSet",
                    klog::KRef(rs->metadata.namespace_, rs->metadata.name), "err",
                    eq.error().ToString());
      continue;
    }
    // With several equal templates (which only a bug could produce) the oldest wins.
    if (*eq) return rs;
  }
  return nullptr;
}

ReplicaSets FindOldReplicaSets(const api::Deployment&, const ReplicaSets& rss,
                               const ReplicaSetPtr& new_rs) {
  ReplicaSets out;
  for (const auto& rs : rss) {
    if (new_rs && rs->metadata.uid == new_rs->metadata.uid) continue;
    out.push_back(rs);
  }
  return out;
}

ReplicaSets FilterActiveReplicaSets(const ReplicaSets& rss) {
  ReplicaSets out;
  for (const auto& rs : rss) {
    if (rs && rs->spec.replicas > 0) out.push_back(rs);
  }
  return out;
}

ReplicaSetPtr FindActiveOrLatest(const ReplicaSetPtr& new_rs, const ReplicaSets& old_rss) {
  if (!new_rs && old_rss.empty()) return nullptr;
  ReplicaSets all = old_rss;
  if (new_rs) all.push_back(new_rs);
  ReplicaSets active = FilterActiveReplicaSets(all);
  if (active.empty()) {
    // No active RS: the newest one (the new RS when it exists).
    if (new_rs) return new_rs;
    std::stable_sort(all.begin(), all.end(), controller::ReplicaSetsByCreationTimestamp{});
    return all.back();
  }
  if (active.size() == 1) return active.front();
  return nullptr;
}

namespace {

// The sum of one count over the ReplicaSets (null entries count 0).
template <typename Count>
int32_t SumOverReplicaSets(const ReplicaSets& rss, Count count) {
  int32_t n = 0;
  for (const auto& rs : rss) n += rs ? count(*rs) : 0;
  return n;
}

}  // namespace

int32_t GetReplicaCountForReplicaSets(const ReplicaSets& rss) {
  return SumOverReplicaSets(rss, [](const api::ReplicaSet& rs) { return rs.spec.replicas; });
}
int32_t GetActualReplicaCountForReplicaSets(const ReplicaSets& rss) {
  return SumOverReplicaSets(rss, [](const api::ReplicaSet& rs) { return rs.status.replicas; });
}
int32_t GetReadyReplicaCountForReplicaSets(const ReplicaSets& rss) {
  return SumOverReplicaSets(rss,
                            [](const api::ReplicaSet& rs) { return rs.status.ready_replicas; });
}
int32_t GetAvailableReplicaCountForReplicaSets(const ReplicaSets& rss) {
  return SumOverReplicaSets(rss,
                            [](const api::ReplicaSet& rs) { return rs.status.available_replicas; });
}
std::optional<int32_t> GetTerminatingReplicaCountForReplicaSets(const ReplicaSets& rss) {
  int32_t n = 0;
  for (const auto& rs : rss) {
    if (!rs) continue;
    if (rs->status.terminating_replicas) {
      n += *rs->status.terminating_replicas;
    } else if (rs->status.observed_generation != 0) {
      // Synced by the ReplicaSet controller yet not reporting the field: no sum can be made.
      return std::nullopt;
    }
    // Never synced (observedGeneration 0) and no field: contributes nothing.
  }
  return n;
}

bool HasProgressDeadline(const api::Deployment& d) {
  return d.spec.progress_deadline_seconds.has_value() &&
         *d.spec.progress_deadline_seconds != INT32_MAX;
}

bool HasRevisionHistoryLimit(const api::Deployment& d) {
  return d.spec.revision_history_limit.has_value() && *d.spec.revision_history_limit != INT32_MAX;
}

bool DeploymentComplete(const api::Deployment& d, const api::DeploymentStatus& s) {
  return s.updated_replicas == d.spec.replicas && s.replicas == d.spec.replicas &&
         s.available_replicas == d.spec.replicas && s.observed_generation >= d.metadata.generation;
}

bool DeploymentProgressing(const api::Deployment& d, const api::DeploymentStatus& s) {
  const api::DeploymentStatus& old = d.status;
  const int32_t old_status_old_replicas = old.replicas - old.updated_replicas;
  const int32_t new_status_old_replicas = s.replicas - s.updated_replicas;
  return s.updated_replicas > old.updated_replicas ||
         new_status_old_replicas < old_status_old_replicas ||
         s.ready_replicas > old.ready_replicas || s.available_replicas > old.available_replicas;
}

bool DeploymentTimedOut(const api::Deployment& d, const api::DeploymentStatus& s, api::Time now) {
  if (!HasProgressDeadline(d)) return false;
  const api::Condition* cond = GetDeploymentCondition(s, kConditionProgressing);
  if (cond == nullptr) return false;
  // A complete rollout never times out; a timed-out one stays so until it progresses.
  if (cond->reason == kNewRSAvailableReason) return false;
  if (cond->reason == kTimedOutReason) return true;
  if (!cond->last_update_time) return false;
  return *cond->last_update_time + std::chrono::seconds(*d.spec.progress_deadline_seconds) < now;
}

std::optional<int64_t> GetRollbackTo(const api::Deployment& d) {
  auto it = d.metadata.annotations.find(std::string(kRollbackToAnnotation));
  if (it == d.metadata.annotations.end()) return std::nullopt;
  std::optional<int64_t> v = ParseInt<int64_t>(it->second);
  if (!v) {
    KLOG_WARNINGS("Deployment has an invalid rollback annotation", "deployment",
                  klog::KRef(d.metadata.namespace_, d.metadata.name), "annotation",
                  kRollbackToAnnotation, "value", it->second);
  }
  return v;
}

}  // namespace kcm::deployment::util
