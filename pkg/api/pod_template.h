// PodTemplate: a pod template (`spec.template`) kept verbatim as raw JSON, plus its labels parsed
// for selector matching. Decision 1: the template travels Deployment → ReplicaSet → Pod untouched.
// Plain data; thread-compatible.
#pragma once

#include <string>

#include "pkg/api/json.h"
#include "pkg/api/shared_meta.h"
#include "pkg/api/shared_text.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct PodTemplate {
  // The exact `spec.template` object ("" when absent). In a decoded ReplicaSet or Deployment a
  // view into the object's own raw_json (one copy of the bytes, SharedText::Sub).
  SharedText raw_json;
  // spec.template.metadata.labels. Immutable and interned like ObjectMeta::labels: a decoded
  // ReplicaSet's template labels are its own labels, so both point at one set.
  Labels labels;

  // The template as a JSON value (parses raw_json; "{}" → empty object).
  Result<json::Value> ToJson() const;
};

// D3: templates equal ignoring the pod-template-hash label, semantically (key order, number
// spelling, and null/empty fields do not matter).
Result<bool> EqualIgnoreHash(const PodTemplate& a, const PodTemplate& b);

}  // namespace kcm::api
