// libFuzzer target for label selectors: a metav1.LabelSelector's JSON read by the document model
// (LabelSelectorFromJson) and by the typed ReplicaSet decoder, compiled (LabelSelectorAsSelector,
// NewRequirement's validation) and matched (labels::Selector). The input is the selector's JSON.
// Checked: both readers give the same selector when both accept it; the selector survives
// ToJson → LabelSelectorFromJson unchanged; a compiled selector holds only valid keys and values,
// prints a stable String(), matches the same label sets whether they are a std::map or the
// interned Labels, matches the set its matchLabels describe, and each requirement matches the set
// built to satisfy it and refuses the one built to violate it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "pkg/api/codec.h"
#include "pkg/api/json.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/labels.h"
#include "pkg/api/replicaset.h"

namespace {

namespace labels = kcm::api::labels;
using kcm::api::Labels;
using kcm::api::LabelSelector;

using kcm::fuzz::Check;

Labels ToLabels(const labels::Set& set) {
  std::vector<Labels::value_type> items(set.begin(), set.end());
  return Labels::Make(std::move(items));
}

bool Matches(const labels::Selector& sel, const labels::Set& set) {
  const bool m = sel.Matches(set);
  Check(sel.Matches(ToLabels(set)) == m);
  return m;
}

// The selector the typed decoder reads from a ReplicaSet whose spec.selector is `text`.
std::optional<LabelSelector> TypedSelector(std::string_view text, bool* ok) {
  const std::string object =
      R"({"metadata":{"name":"rs"},"spec":{"selector":)" + std::string(text) + "}}";
  kcm::api::Decoder decoder;
  auto rs = kcm::api::DecodeReplicaSet(decoder, object);
  *ok = rs.ok();
  if (!rs.ok()) return std::nullopt;
  return (*rs)->spec.selector;
}

void CheckCompiled(const LabelSelector& ls) {
  auto sel = kcm::api::LabelSelectorAsSelector(&ls);
  if (!sel.ok()) {
    Check(sel.error().reason == "InvalidArgument");
    return;
  }
  const std::string printed = sel->String();
  Check(kcm::api::LabelSelectorAsSelector(&ls)->String() == printed);
  labels::Set own;
  for (const auto& [k, v] : ls.match_labels) own.emplace(std::string(k), std::string(v));
  for (const labels::Requirement& r : sel->requirements()) {
    Check(labels::IsQualifiedName(r.key));
    for (const std::string& v : r.values) Check(labels::IsValidLabelValue(v));
    Check(printed.find(r.String()) != std::string::npos);
    // A set that satisfies r, and one that violates it.
    labels::Set yes, no;
    switch (r.op) {
      case labels::Operator::kEquals:
      case labels::Operator::kIn:
        yes[r.key] = r.values.front();
        break;
      case labels::Operator::kNotEquals:
      case labels::Operator::kNotIn:
        no[r.key] = r.values.front();
        break;
      case labels::Operator::kExists:
        yes[r.key] = "";
        break;
      case labels::Operator::kDoesNotExist:
        no[r.key] = "";
        break;
    }
    Check(r.Matches(yes) && r.Matches(ToLabels(yes)));
    Check(!r.Matches(no) && !r.Matches(ToLabels(no)));
    Check(!Matches(labels::Selector::FromRequirements({r}), no));
  }
  if (ls.match_expressions.empty()) Check(Matches(*sel, own));
  Matches(*sel, {});
  Check(!Matches(labels::Selector::Nothing(), own));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = kcm::api::json::Parse(text);
  if (!doc.ok()) return 0;
  auto selector = kcm::api::LabelSelectorFromJson(*doc);
  bool typed_ok = false;
  std::optional<LabelSelector> typed = TypedSelector(kcm::api::json::Serialize(*doc), &typed_ok);
  if (!selector.ok()) {
    Check(selector.error().reason == "DecodeError");
    return 0;
  }
  if (typed_ok) Check(typed.has_value() && *typed == *selector);
  auto again = kcm::api::LabelSelectorFromJson(selector->ToJson());
  Check(again.ok() && *again == *selector);
  CheckCompiled(*selector);
  return 0;
}
