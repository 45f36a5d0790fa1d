#include "pkg/api/labels.h"

#include <algorithm>
#include <functional>

namespace kcm::api::labels {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 characters.
bool IsLabelToken(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: lower-case labels of [a-z0-9-] separated by dots, at most 253 characters.
bool IsDNSSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || part.size() > 63) return false;
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(part.front()) || !lower_alnum(part.back())) return false;
    for (char c : part) {
      if (!lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

bool IsQualifiedName(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsLabelToken(key);
  return IsDNSSubdomain(key.substr(0, slash)) && IsLabelToken(key.substr(slash + 1));
}

bool IsValidLabelValue(std::string_view value) {
  return value.empty() || IsLabelToken(value);
}

Result<Requirement> NewRequirement(std::string key, Operator op, std::vector<std::string> values) {
  if (!IsQualifiedName(key)) {
    return Error::Local("InvalidArgument", "invalid label key \"" + key + "\"");
  }
  switch (op) {
    case Operator::kIn:
    case Operator::kNotIn:
      if (values.empty()) {
        return Error::Local(
            "InvalidArgument",
            "key \"" + key + "\": for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case Operator::kEquals:
    case Operator::kNotEquals:
      if (values.size() != 1) {
        return Error::Local("InvalidArgument",
                            "key \"" + key + "\": exact-match compatibility requires one value");
      }
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      if (!values.empty()) {
        return Error::Local(
            "InvalidArgument",
            "key \"" + key + "\": values set must be empty for exists and does not exist");
      }
      break;
  }
  for (const std::string& v : values) {
    if (!IsValidLabelValue(v)) {
      return Error::Local("InvalidArgument",
                          "key \"" + key + "\": invalid label value \"" + v + "\"");
    }
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return Requirement{std::move(key), op, std::move(values)};
}

namespace {

// Requirement::Matches for any map-like label set (std::map or api::Labels).
template <typename LabelSet>
bool RequirementMatches(const Requirement& r, const LabelSet& labels) {
  const std::vector<std::string>& values = r.values;
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  auto in_values = [&] {
    return std::binary_search(values.begin(), values.end(), std::string_view(it->second),
                              std::less<>());
  };
  switch (r.op) {
    case Operator::kEquals:
    case Operator::kIn:
      return has && in_values();
    case Operator::kNotEquals:
    case Operator::kNotIn:
      return !has || !in_values();
    case Operator::kExists:
      return has;
    case Operator::kDoesNotExist:
      return !has;
  }
  return false;
}

}  // namespace

bool Requirement::Matches(const Set& labels) const {
  return RequirementMatches(*this, labels);
}

bool Requirement::Matches(const Labels& labels) const {
  return RequirementMatches(*this, labels);
}

std::string Requirement::String() const {
  std::string out;
  if (op == Operator::kDoesNotExist) out += '!';
  out += key;
  auto join = [&] {
    out += " (";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out += ',';
      out += values[i];
    }
    out += ')';
  };
  switch (op) {
    case Operator::kEquals:
      out += '=' + values.at(0);
      break;
    case Operator::kNotEquals:
      out += "!=" + values.at(0);
      break;
    case Operator::kIn:
      out += " in";
      join();
      break;
    case Operator::kNotIn:
      out += " notin";
      join();
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      break;
  }
  return out;
}

Selector Selector::FromRequirements(std::vector<Requirement> reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return Selector(false, std::move(reqs));
}

Selector Selector::FromSet(const Set& set) {
  std::vector<Requirement> reqs;
  reqs.reserve(set.size());
  for (const auto& [k, v] : set) reqs.push_back(Requirement{k, Operator::kEquals, {v}});
  return FromRequirements(std::move(reqs));
}

bool Selector::Matches(const Set& labels) const {
  if (nothing_) return false;
  for (const Requirement& r : reqs_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

bool Selector::Matches(const Labels& labels) const {
  if (nothing_) return false;
  for (const Requirement& r : reqs_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

std::string Selector::String() const {
  std::string out;
  for (const Requirement& r : reqs_) {
    if (!out.empty()) out += ',';
    out += r.String();
  }
  return out;
}

}  // namespace kcm::api::labels
