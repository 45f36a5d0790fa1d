#include "pkg/api/pod_template.h"

#include "pkg/api/hash.h"

namespace kcm::api {

Result<json::Value> PodTemplate::ToJson() const {
  if (raw_json.empty()) return json::Value::MakeObject();
  return json::Parse(raw_json);
}

Result<bool> EqualIgnoreHash(const PodTemplate& a, const PodTemplate& b) {
  auto ja = a.ToJson();
  if (!ja.ok()) return ja.error();
  auto jb = b.ToJson();
  if (!jb.ok()) return jb.error();
  json::ErasePath(*ja, {"metadata", "labels", kPodTemplateHashLabel});
  json::ErasePath(*jb, {"metadata", "labels", kPodTemplateHashLabel});
  return json::SemanticEqual(*ja, *jb);
}

}  // namespace kcm::api
