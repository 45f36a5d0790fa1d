// Condition: the status condition shape shared by ReplicaSet and Deployment (type, status,
// reason, message, lastUpdateTime, lastTransitionTime). Plain data; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/object_meta.h"
#include "pkg/api/optional_time.h"
#include "pkg/api/shared_meta.h"

namespace kcm::api {

// Every cached Deployment carries two or three of these, so they are kept small (72 bytes, was
// 160): type, status and reason are SharedStrings (8 bytes, read like a const std::string), which
// the decoder interns — a few distinct values across all objects ("Available", "True",
// "MinimumReplicasAvailable" …); the message, mostly unique (it names the ReplicaSet), stays a
// std::string; the times are 8-byte OptionalTimes. All six fields are kept: the status writes are
// built from them (ToJson).
struct Condition {
  SharedString type;
  SharedString status;  // "True", "False", "Unknown"
  SharedString reason;
  std::string message;
  OptionalTime last_update_time;  // Deployment only
  OptionalTime last_transition_time;

  json::Value ToJson() const;
  friend bool operator==(const Condition&, const Condition&) = default;
};

json::Value ConditionsToJson(const std::vector<Condition>& conditions);

}  // namespace kcm::api
