// Condition: the status condition shape shared by ReplicaSet and Deployment (type, status,
// reason, message, lastUpdateTime, lastTransitionTime). Plain data; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/object_meta.h"

namespace kcm::api {

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::optional<Time> last_update_time;  // Deployment only
  std::optional<Time> last_transition_time;

  json::Value ToJson() const;
  friend bool operator==(const Condition&, const Condition&) = default;
};

json::Value ConditionsToJson(const std::vector<Condition>& conditions);

}  // namespace kcm::api
