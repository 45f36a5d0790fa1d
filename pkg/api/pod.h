// Pod: the pruned record the pod cache keeps (decision 3) — only what the ReplicaSet
// and Deployment controllers read (R9, R10, R14). Immutable once cached; thread-safe to read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::api {

enum class PodPhase : uint8_t { kUnset, kPending, kRunning, kSucceeded, kFailed, kUnknown };
enum class ConditionStatus : uint8_t { kUnset, kTrue, kFalse, kUnknown };

inline constexpr std::string_view kPodDeletionCostAnnotation =
    "controller.kubernetes.io/pod-deletion-cost";

struct Pod final : Object {
  // annotations are pruned (only the deletion cost is kept, below), generateName is not kept,
  // managedFields are dropped; labels, owner references, the namespace and the node name are
  // interned 8-byte pointers (shared_meta.h), the resourceVersion a number (resource_version.h);
  // timestamps are 8-byte OptionalTimes. sizeof(Pod) is 168: with make_shared's control block one
  // 184-byte request, a 192-byte malloc chunk (bench/api/pod_memory.cc, docs/architecture.md
  // "Compact pod records"); 8 bytes more would cost a 16-byte chunk step.
  // The restart counts' sum is not kept: no controller reads it (upstream ActivePodsWithRanks
  // ranks by the maximum, compareMaxContainerRestarts).
  ObjectMeta metadata;
  SharedString node_name;              // spec.nodeName
  OptionalTime ready_transition_time;  // the Ready condition's lastTransitionTime
  // controller.kubernetes.io/pod-deletion-cost: nullopt when absent; an invalid value reads as 0
  // (R9: invalid = 0).
  std::optional<int32_t> deletion_cost;
  int32_t restart_count_max = 0;  // max of status.containerStatuses[].restartCount
  PodPhase phase = PodPhase::kUnset;
  ConditionStatus ready = ConditionStatus::kUnset;  // the Ready condition's status

  std::string_view Kind() const override { return "Pod"; }
  const ObjectMeta& Meta() const override { return metadata; }

  bool IsReady() const { return ready == ConditionStatus::kTrue; }
  // R10: not Succeeded/Failed and not being deleted.
  bool IsActive() const {
    return phase != PodPhase::kSucceeded && phase != PodPhase::kFailed &&
           !metadata.deletion_timestamp.has_value();
  }
};

// Decodes one Pod object document into the pruned record.
Result<std::shared_ptr<const Pod>> DecodePod(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
