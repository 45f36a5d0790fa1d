#include "pkg/api/condition.h"

#include "pkg/api/time.h"

namespace kcm::api {

json::Value Condition::ToJson() const {
  json::Value out = json::Value::MakeObject();
  out.Set("type", json::Value::String(type));
  out.Set("status", json::Value::String(status));
  if (last_update_time)
    out.Set("lastUpdateTime", json::Value::String(FormatTime(*last_update_time)));
  if (last_transition_time) {
    out.Set("lastTransitionTime", json::Value::String(FormatTime(*last_transition_time)));
  }
  if (!reason.empty()) out.Set("reason", json::Value::String(reason));
  if (!message.empty()) out.Set("message", json::Value::String(message));
  return out;
}

json::Value ConditionsToJson(const std::vector<Condition>& conditions) {
  json::Value out = json::Value::MakeArray();
  for (const Condition& c : conditions) out.as_array().push_back(c.ToJson());
  return out;
}

}  // namespace kcm::api
