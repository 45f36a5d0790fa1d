// ReplicaSet (apps/v1): the fields the controllers read, plus the object's full raw JSON so
// writes built from it lose nothing (decision 1). Immutable once cached; thread-safe to read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/condition.h"
#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/object.h"
#include "pkg/api/pod_template.h"
#include "pkg/api/resource.h"
#include "pkg/api/shared_text.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct ReplicaSetSpec {
  int32_t replicas = 1;  // defaulted by the API server; 1 when absent
  int32_t min_ready_seconds = 0;
  std::optional<LabelSelector> selector;  // nullopt = null selector (matches nothing)
  PodTemplate pod_template;               // spec.template
};

struct ReplicaSetStatus {
  int32_t replicas = 0;
  int32_t fully_labeled_replicas = 0;
  int32_t ready_replicas = 0;
  int32_t available_replicas = 0;
  std::optional<int32_t> terminating_replicas;  // newer API servers only
  int64_t observed_generation = 0;
  std::vector<Condition> conditions;

  // The `status` object as the API server expects it (zero counts omitted like omitempty,
  // except replicas which is always written).
  json::Value ToJson() const;
  friend bool operator==(const ReplicaSetStatus&, const ReplicaSetStatus&) = default;
};

struct ReplicaSet final : Object {
  ObjectMeta metadata;
  ReplicaSetSpec spec;
  ReplicaSetStatus status;
  // The whole object as received, without metadata.managedFields; spec.pod_template.raw_json
  // points into it.
  SharedText raw_json;

  std::string_view Kind() const override { return kReplicaSets.kind; }
  const ObjectMeta& Meta() const override { return metadata; }
};

Result<std::shared_ptr<const ReplicaSet>> DecodeReplicaSet(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
