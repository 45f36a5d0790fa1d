// Deployment (apps/v1): the fields the Deployment controller reads, plus the full raw JSON so
// writes lose nothing (decision 1). Immutable once cached; thread-safe to read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/condition.h"
#include "pkg/api/decoder.h"
#include "pkg/api/int_or_string.h"
#include "pkg/api/json_input.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/object.h"
#include "pkg/api/pod_template.h"
#include "pkg/api/resource.h"
#include "pkg/api/shared_text.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct RollingUpdateDeployment {
  std::optional<IntOrString> max_surge;        // nullopt when absent (server defaults 25%)
  std::optional<IntOrString> max_unavailable;  // nullopt when absent (server defaults 25%)
};

struct DeploymentStrategy {
  std::string type = "RollingUpdate";  // "RollingUpdate" or "Recreate"
  std::optional<RollingUpdateDeployment> rolling_update;
};

struct DeploymentSpec {
  int32_t replicas = 1;  // 1 when absent
  std::optional<LabelSelector> selector;
  PodTemplate pod_template;  // spec.template
  DeploymentStrategy strategy;
  int32_t min_ready_seconds = 0;
  std::optional<int32_t> revision_history_limit;
  bool paused = false;
  std::optional<int32_t> progress_deadline_seconds;
};

struct DeploymentStatus {
  int64_t observed_generation = 0;
  int32_t replicas = 0;
  int32_t updated_replicas = 0;
  int32_t ready_replicas = 0;
  int32_t available_replicas = 0;
  int32_t unavailable_replicas = 0;
  std::optional<int32_t> terminating_replicas;
  std::vector<Condition> conditions;
  std::optional<int32_t> collision_count;

  json::Value ToJson() const;
  friend bool operator==(const DeploymentStatus&, const DeploymentStatus&) = default;
};

struct Deployment final : Object {
  ObjectMeta metadata;
  DeploymentSpec spec;
  DeploymentStatus status;
  // The whole object as received, without metadata.managedFields; spec.pod_template.raw_json
  // points into it.
  SharedText raw_json;

  std::string_view Kind() const override { return kDeployments.kind; }
  const ObjectMeta& Meta() const override { return metadata; }
};

Result<std::shared_ptr<const Deployment>> DecodeDeployment(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
