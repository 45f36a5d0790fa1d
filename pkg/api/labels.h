// labels::Selector: a compiled label selector (k8s.io/apimachinery/pkg/labels) that matches label
// sets and prints the query-string form the API server accepts. Immutable after construction;
// const methods are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/shared_meta.h"
#include "pkg/util/result.h"

namespace kcm::api::labels {

using Set = std::map<std::string, std::string>;

enum class Operator : uint8_t { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };

struct Requirement {
  std::string key;
  Operator op = Operator::kExists;
  std::vector<std::string> values;  // sorted, unique

  bool Matches(const Set& labels) const;
  bool Matches(const Labels& labels) const;
  // "k=v", "k!=v", "k in (a,b)", "k notin (a,b)", "k", "!k".
  std::string String() const;
};

// Validates key and values against the operator's rules (In/NotIn: ≥1 value; Equals/NotEquals:
// exactly one; Exists/DoesNotExist: none) and label syntax; reason "Invalid".
Result<Requirement> NewRequirement(std::string key, Operator op, std::vector<std::string> values);

// Label key syntax: [prefix/]name, prefix a DNS subdomain (≤253), name ≤63 alphanumerics with
// '-', '_', '.' inside. Value: empty or ≤63 of the same characters.
bool IsQualifiedName(std::string_view key);
bool IsValidLabelValue(std::string_view value);

class Selector {
 public:
  // Matches every label set (an empty metav1.LabelSelector, `{}`).
  static Selector Everything() { return Selector(false, {}); }
  // Matches nothing (a null metav1.LabelSelector).
  static Selector Nothing() { return Selector(true, {}); }
  // Requirements are ANDed; they are kept sorted by key (stable) for a deterministic String().
  static Selector FromRequirements(std::vector<Requirement> reqs);
  // Equality selector for a set (labels.SelectorFromSet).
  static Selector FromSet(const Set& set);

  bool Matches(const Set& labels) const;
  bool Matches(const Labels& labels) const;  // an object's metadata.labels
  // True for Everything() (no requirements and not Nothing()).
  bool Empty() const { return !nothing_ && reqs_.empty(); }
  bool IsNothing() const { return nothing_; }
  // Query-string form ("a=b,c in (x,y),!d"). Both Everything() and Nothing() print "" (as
  // upstream), so callers must check IsNothing() before listing with it.
  std::string String() const;
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  Selector(bool nothing, std::vector<Requirement> reqs)
      : nothing_(nothing), reqs_(std::move(reqs)) {}
  bool nothing_ = false;
  std::vector<Requirement> reqs_;
};

}  // namespace kcm::api::labels
