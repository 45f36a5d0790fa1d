#include "pkg/api/label_selector.h"

namespace kcm::api {

json::Value LabelSelector::ToJson() const {
  json::Value out = json::Value::MakeObject();
  if (!match_labels.empty()) {
    json::Value ml = json::Value::MakeObject();
    for (const auto& [k, v] : match_labels) ml.Set(k, json::Value::String(std::string(v)));
    out.Set("matchLabels", std::move(ml));
  }
  if (!match_expressions.empty()) {
    json::Value exprs = json::Value::MakeArray();
    for (const auto& e : match_expressions) {
      json::Value je = json::Value::MakeObject();
      je.Set("key", json::Value::String(e.key));
      je.Set("operator", json::Value::String(e.op));
      if (!e.values.empty()) {
        json::Value vals = json::Value::MakeArray();
        for (const auto& v : e.values) vals.as_array().push_back(json::Value::String(v));
        je.Set("values", std::move(vals));
      }
      exprs.as_array().push_back(std::move(je));
    }
    out.Set("matchExpressions", std::move(exprs));
  }
  return out;
}

Result<labels::Selector> LabelSelectorAsSelector(const LabelSelector* selector) {
  if (selector == nullptr) return labels::Selector::Nothing();
  if (selector->match_labels.empty() && selector->match_expressions.empty()) {
    return labels::Selector::Everything();
  }
  std::vector<labels::Requirement> reqs;
  reqs.reserve(selector->match_labels.size() + selector->match_expressions.size());
  for (const auto& [k, v] : selector->match_labels) {
    auto r = labels::NewRequirement(std::string(k), labels::Operator::kEquals, {std::string(v)});
    if (!r.ok()) return r.error();
    reqs.push_back(std::move(r).value());
  }
  for (const auto& e : selector->match_expressions) {
    labels::Operator op;
    if (e.op == "In") {
      op = labels::Operator::kIn;
    } else if (e.op == "NotIn") {
      op = labels::Operator::kNotIn;
    } else if (e.op == "Exists") {
      op = labels::Operator::kExists;
    } else if (e.op == "DoesNotExist") {
      op = labels::Operator::kDoesNotExist;
    } else {
      return Error::Local("InvalidArgument",
                          "\"" + e.op + "\" is not a valid label selector operator");
    }
    auto r = labels::NewRequirement(e.key, op, e.values);
    if (!r.ok()) return r.error();
    reqs.push_back(std::move(r).value());
  }
  return labels::Selector::FromRequirements(std::move(reqs));
}

namespace {
Error Bad(const std::string& path, const char* what) {
  return Error::Local("DecodeError", path + ": " + what);
}
}  // namespace

Result<LabelSelector> LabelSelectorFromJson(const json::Value& v) {
  LabelSelector out;
  if (!v.is_object()) return Bad("selector", "expected object");
  if (const json::Value* ml = v.Find("matchLabels"); ml != nullptr && !ml->is_null()) {
    if (!ml->is_object()) return Bad("selector.matchLabels", "expected object");
    std::vector<Labels::value_type> items;
    for (const auto& [k, val] : ml->as_object()) {
      if (!val.is_string()) return Bad("selector.matchLabels." + k, "expected string");
      items.emplace_back(k, val.as_string());
    }
    out.match_labels = Labels::Make(std::move(items));
  }
  if (const json::Value* me = v.Find("matchExpressions"); me != nullptr && !me->is_null()) {
    if (!me->is_array()) return Bad("selector.matchExpressions", "expected array");
    for (const json::Value& e : me->as_array()) {
      std::string path =
          "selector.matchExpressions[" + std::to_string(out.match_expressions.size()) + "]";
      if (!e.is_object()) return Bad(path, "expected object");
      LabelSelectorRequirement req;
      const json::Value* key = e.Find("key");
      const json::Value* op = e.Find("operator");
      if (key == nullptr || !key->is_string()) return Bad(path + ".key", "expected string");
      if (op == nullptr || !op->is_string()) return Bad(path + ".operator", "expected string");
      req.key = key->as_string();
      req.op = op->as_string();
      if (const json::Value* vals = e.Find("values"); vals != nullptr && !vals->is_null()) {
        if (!vals->is_array()) return Bad(path + ".values", "expected array");
        for (const json::Value& s : vals->as_array()) {
          if (!s.is_string()) return Bad(path + ".values", "expected strings");
          req.values.push_back(s.as_string());
        }
      }
      out.match_expressions.push_back(std::move(req));
    }
  }
  return out;
}

}  // namespace kcm::api
