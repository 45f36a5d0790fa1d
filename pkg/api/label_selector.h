// metav1.LabelSelector (matchLabels + matchExpressions) as it appears in Deployment and
// ReplicaSet specs, and its conversion to a labels::Selector. Plain data; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/labels.h"
#include "pkg/api/shared_meta.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // "In", "NotIn", "Exists", "DoesNotExist"
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct LabelSelector {
  // Immutable and interned by the decoders like ObjectMeta::labels (pkg/api/shared_meta.h): one
  // flat block instead of a std::map node per label, shared by equal selectors.
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;

  json::Value ToJson() const;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

// LabelSelectorAsSelector: nullptr → Nothing; {} → Everything; otherwise matchLabels as
// equality requirements ANDed with the expressions. Errors (reason "Invalid") for an unknown
// operator, a value list that breaks the operator's rule, or bad label syntax.
Result<labels::Selector> LabelSelectorAsSelector(const LabelSelector* selector);

// Reads a selector from its JSON object form (wrong types → "DecodeError" naming the field).
Result<LabelSelector> LabelSelectorFromJson(const json::Value& v);

}  // namespace kcm::api
