#include "controllers/replicaset/replica_set_utils.h"

#include <algorithm>

#include "pkg/api/label_selector.h"
#include "pkg/api/labels.h"
#include "pkg/util/klog.h"

namespace kcm::replicaset {

api::Condition NewReplicaSetCondition(std::string_view type, std::string_view status,
                                      std::string_view reason, std::string message, api::Time now) {
  api::Condition c;
  c.type = std::string(type);
  c.status = std::string(status);
  c.reason = std::string(reason);
  c.message = std::move(message);
  // Timestamps travel with second precision (metav1.Time); keep what we compare equal to what the
  // server will hand back.
  c.last_transition_time = std::chrono::floor<std::chrono::seconds>(now);
  return c;
}

const api::Condition* GetCondition(const api::ReplicaSetStatus& status, std::string_view type) {
  for (const auto& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void SetCondition(api::ReplicaSetStatus& status, api::Condition condition) {
  const api::Condition* current = GetCondition(status, condition.type);
  if (current != nullptr && current->status == condition.status &&
      current->reason == condition.reason) {
    return;
  }
  RemoveCondition(status, condition.type);
  status.conditions.push_back(std::move(condition));
}

void RemoveCondition(api::ReplicaSetStatus& status, std::string_view type) {
  std::erase_if(status.conditions, [&](const api::Condition& c) { return c.type == type; });
}

api::ReplicaSetStatus CalculateStatus(const api::ReplicaSet& rs, const CalculateStatusInput& in) {
  api::ReplicaSetStatus status = rs.status;
  const std::vector<PodPtr>& pods = *in.filtered_pods;
  const api::labels::Selector template_labels =
      api::labels::Selector::FromSet(rs.spec.pod_template.labels.ToMap());
  int32_t fully_labeled = 0, ready = 0, available = 0;
  for (const auto& pod : pods) {
    if (template_labels.Matches(pod->metadata.labels)) ++fully_labeled;
    if (controller::IsPodReady(*pod)) {
      ++ready;
      if (controller::IsPodAvailable(*pod, rs.spec.min_ready_seconds, in.now)) ++available;
    }
  }

  const api::Condition* failure = GetCondition(rs.status, kReplicaFailure);
  const bool manage_failed = in.manage_replicas_status && !in.manage_replicas_status->ok();
  if (manage_failed && failure == nullptr) {
    std::string reason;
    const int64_t diff = static_cast<int64_t>(pods.size()) - rs.spec.replicas;
    if (diff < 0) {
      reason = kFailedCreateReason;
    } else if (diff > 0) {
      reason = kFailedDeleteReason;
    }
    SetCondition(status,
                 NewReplicaSetCondition(kReplicaFailure, "True", reason,
                                        in.manage_replicas_status->error().message, in.now));
  } else if (!manage_failed && failure != nullptr) {
    RemoveCondition(status, kReplicaFailure);
  }

  status.replicas = static_cast<int32_t>(pods.size());
  status.fully_labeled_replicas = fully_labeled;
  status.ready_replicas = ready;
  status.available_replicas = available;
  status.terminating_replicas = in.terminating_replicas;
  return status;
}

bool StatusUpToDate(const api::ReplicaSet& rs, const api::ReplicaSetStatus& status) {
  const api::ReplicaSetStatus& cur = rs.status;
  return cur.replicas == status.replicas &&
         cur.fully_labeled_replicas == status.fully_labeled_replicas &&
         cur.ready_replicas == status.ready_replicas &&
         cur.available_replicas == status.available_replicas &&
         cur.terminating_replicas == status.terminating_replicas &&
         rs.metadata.generation == cur.observed_generation && cur.conditions == status.conditions;
}

Result<ReplicaSetPtr> UpdateReplicaSetStatus(ReplicaSetClient& client, ReplicaSetPtr rs,
                                             api::ReplicaSetStatus status) {
  if (StatusUpToDate(*rs, status)) return rs;
  status.observed_generation = rs->metadata.generation;
  Error last;
  for (int i = 0;; ++i) {
    // Each field as "old->new", as upstream's updateReplicaSetStatus writes them.
    auto change = [](int64_t from, int64_t to) {
      return std::to_string(from) + "->" + std::to_string(to);
    };
    KLOG_V_INFOS(4, "Updating status for ReplicaSet", "replicaSet",
                 klog::KRef(rs->metadata.namespace_, rs->metadata.name), "replicas",
                 change(rs->status.replicas, status.replicas), "need", rs->spec.replicas,
                 "fullyLabeledReplicas",
                 change(rs->status.fully_labeled_replicas, status.fully_labeled_replicas),
                 "readyReplicas", change(rs->status.ready_replicas, status.ready_replicas),
                 "availableReplicas",
                 change(rs->status.available_replicas, status.available_replicas), "sequenceNo",
                 change(rs->status.observed_generation, status.observed_generation));
    Result<ReplicaSetPtr> updated = client.UpdateStatus(*rs, status);
    if (updated.ok()) return updated;
    last = updated.error();
    if (i >= kStatusUpdateRetries) break;
    // Re-read so the retry carries the latest resourceVersion.
    Result<ReplicaSetPtr> fresh = client.Get(rs->metadata.namespace_, rs->metadata.name);
    if (!fresh.ok()) return fresh.error();
    rs = *fresh;
  }
  return last;
}

std::optional<Clock::duration> NextAvailabilityCheck(const std::vector<PodPtr>& pods,
                                                     int32_t min_ready_seconds, api::Time now) {
  if (min_ready_seconds <= 0) return std::nullopt;
  std::optional<Clock::duration> next;
  const auto min_ready = std::chrono::seconds(min_ready_seconds);
  for (const auto& pod : pods) {
    if (!controller::IsPodReady(*pod) || !pod->ready_transition_time) continue;
    if (controller::IsPodAvailable(*pod, min_ready_seconds, now)) continue;
    // Available once strictly more than minReadySeconds have passed: come back just after.
    auto wait =
        std::chrono::duration_cast<Clock::duration>(*pod->ready_transition_time + min_ready - now) +
        std::chrono::milliseconds(1);
    if (wait < Clock::duration::zero()) wait = std::chrono::milliseconds(1);
    if (!next || wait < *next) next = wait;
  }
  return next;
}

Result<api::labels::Selector> SelectorOf(const api::ReplicaSet& rs) {
  if (!rs.spec.selector) return Error::Local("InvalidArgument", "spec.selector is null");
  Result<api::labels::Selector> selector = api::LabelSelectorAsSelector(&*rs.spec.selector);
  if (!selector.ok()) return selector.error();
  if (selector->Empty() || selector->IsNothing()) {
    return Error::Local("InvalidArgument", "spec.selector selects everything or nothing");
  }
  return selector;
}

}  // namespace kcm::replicaset
