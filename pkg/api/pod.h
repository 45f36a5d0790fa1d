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
#include "pkg/api/resource.h"
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
  // timestamps are 8-byte OptionalTimes; the last four fields share 8 bytes. sizeof(Pod) is 152:
  // with make_shared's control block one 168-byte request, a 176-byte malloc chunk
  // (bench/api/pod_memory.cc, docs/design/compact-pod-record.md); one byte more would
  // cost a 16-byte chunk step on every cached pod.
  // The restart counts' sum is not kept: no controller reads it (upstream ActivePodsWithRanks
  // ranks by the maximum, compareMaxContainerRestarts).
  ObjectMeta metadata;
  SharedString node_name;              // spec.nodeName
  OptionalTime ready_transition_time;  // the Ready condition's lastTransitionTime
  // controller.kubernetes.io/pod-deletion-cost; absent and invalid values read as 0 (R9; upstream
  // getDeletionCostFromPodAnnotations, the only reader, ranks an absent cost as 0 too).
  int32_t deletion_cost = 0;
  // max of status.containerStatuses[].restartCount (NoteRestartCount), saturated at
  // kMaxRestartCount: 24 bits, so that it shares a word with the phase and readiness. Ranks differ
  // from upstream's only between pods whose containers restarted more than 16.7 million times.
  uint32_t restart_count_max : 24 = 0;
  PodPhase phase : 3 = PodPhase::kUnset;
  ConditionStatus ready : 2 = ConditionStatus::kUnset;  // the Ready condition's status

  static constexpr int32_t kMaxRestartCount = (1 << 24) - 1;
  // Raises restart_count_max to n (negative counts, which the API rejects, count as 0).
  void NoteRestartCount(int32_t n) {
    const int32_t clamped = n < 0 ? 0 : n > kMaxRestartCount ? kMaxRestartCount : n;
    if (static_cast<uint32_t>(clamped) > restart_count_max) restart_count_max = clamped;
  }

  std::string_view Kind() const override { return kPods.kind; }
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
