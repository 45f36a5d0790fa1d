#include "pkg/api/pod_template.h"

#include "pkg/api/hash.h"
#include "pkg/api/internal/raw_json.h"

namespace kcm::api {

Result<json::Value> PodTemplate::ToJson() const {
  if (raw_json.empty()) return json::Value::MakeObject();
  return json::Parse(raw_json.str());
}

Result<bool> EqualIgnoreHash(const PodTemplate& a, const PodTemplate& b) {
  // Fast path: the API server writes a ReplicaSet's template and its Deployment's with the same
  // encoder, so a ReplicaSet made from the Deployment's current template has the same text but
  // for the hash label. Equal texts once that label is cut out are equal templates; anything
  // else is decided on the documents below.
  const std::string text_a = a.raw_json.str();
  const std::string text_b = b.raw_json.str();
  std::optional<std::string> ta =
      internal::RawEraseMember(text_a, {"metadata", "labels", kPodTemplateHashLabel});
  if (ta) {
    std::optional<std::string> tb =
        internal::RawEraseMember(text_b, {"metadata", "labels", kPodTemplateHashLabel});
    if (tb && *ta == *tb) return true;
  }
  auto parse = [](const std::string& text) -> Result<json::Value> {
    if (text.empty()) return json::Value::MakeObject();
    return json::Parse(text);
  };
  auto ja = parse(text_a);
  if (!ja.ok()) return ja.error();
  auto jb = parse(text_b);
  if (!jb.ok()) return jb.error();
  json::ErasePath(*ja, {"metadata", "labels", kPodTemplateHashLabel});
  json::ErasePath(*jb, {"metadata", "labels", kPodTemplateHashLabel});
  return json::SemanticEqual(*ja, *jb);
}

}  // namespace kcm::api
