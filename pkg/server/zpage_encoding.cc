#include "pkg/server/zpage_encoding.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace kcm::server {
namespace {

namespace json = api::json;

void AppendIndented(const json::Value& v, int depth, std::string* out) {
  const std::string pad(2 * (depth + 1), ' ');
  const std::string close_pad(2 * depth, ' ');
  if (v.is_object() && !v.as_object().empty()) {
    *out += "{\n";
    bool first = true;
    for (const auto& [key, member] : v.as_object()) {
      *out += (first ? "" : ",\n") + pad;
      first = false;
      json::AppendQuoted(key, out);
      *out += ": ";
      AppendIndented(member, depth + 1, out);
    }
    *out += "\n" + close_pad + "}";
  } else if (v.is_array() && !v.as_array().empty()) {
    *out += "[\n";
    bool first = true;
    for (const auto& item : v.as_array()) {
      *out += (first ? "" : ",\n") + pad;
      first = false;
      AppendIndented(item, depth + 1, out);
    }
    *out += "\n" + close_pad + "]";
  } else {
    json::SerializeTo(v, out);
  }
}

bool IsYamlNumber(std::string_view s) {
  // YAML 1.1 ints and floats as go-yaml resolves them: [-+]digits, decimals, exponents, .inf,
  // .nan, 0x.., 0o.., and underscores between digits.
  static constexpr std::string_view kSpecial[] = {".inf",  ".Inf",  ".INF", "-.inf", "-.Inf",
                                                  "-.INF", "+.inf", ".nan", ".NaN",  ".NAN"};
  if (std::find(std::begin(kSpecial), std::end(kSpecial), s) != std::end(kSpecial)) return true;
  std::string_view t = s;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.remove_prefix(1);
  if (t.empty()) return false;
  if (t.starts_with("0x") || t.starts_with("0o") || t.starts_with("0b")) {
    return t.size() > 2 && std::all_of(t.begin() + 2, t.end(), [](char c) {
             return std::isxdigit(static_cast<unsigned char>(c)) || c == '_';
           });
  }
  bool digits = false, dot = false, exp = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '_' && digits && !exp) {
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      if (i + 1 < t.size() && (t[i + 1] == '-' || t[i + 1] == '+')) ++i;
      if (i + 1 >= t.size()) return false;
    } else {
      return false;
    }
  }
  return digits;
}

// A YAML 1.1 timestamp as go-yaml resolves one: a date "2006-01-02", optionally followed by
// 'T', 't' or spaces and a time.
bool IsYamlTimestamp(std::string_view s) {
  auto digits = [&](size_t from, size_t n) {
    if (s.size() < from + n) return false;
    for (size_t i = from; i < from + n; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    }
    return true;
  };
  if (!digits(0, 4) || s.size() < 8 || s[4] != '-') return false;
  size_t month = digits(5, 2) ? 2 : digits(5, 1) ? 1 : 0;
  if (month == 0 || s.size() <= 5 + month || s[5 + month] != '-') return false;
  const size_t day_at = 6 + month;
  size_t day = digits(day_at, 2) ? 2 : digits(day_at, 1) ? 1 : 0;
  if (day == 0) return false;
  const size_t end = day_at + day;
  return end == s.size() || s[end] == 'T' || s[end] == 't' || s[end] == ' ';
}

// Whether plain YAML would read `s` as something other than this string (go-yaml's resolve).
bool ResolvesToOtherType(std::string_view s) {
  static constexpr std::string_view kWords[] = {
      "y",    "Y",     "yes",   "Yes",   "YES",  "n",    "N",    "no",   "No",
      "NO",   "on",    "On",    "ON",    "off",  "Off",  "OFF",  "true", "True",
      "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~",    "<<"};
  if (std::find(std::begin(kWords), std::end(kWords), s) != std::end(kWords)) return true;
  return IsYamlNumber(s) || IsYamlTimestamp(s);
}

// Whether the emitter refuses `s` as a plain scalar (an indicator first, ": " or " #" inside,
// spaces at an end, a control character): it then writes it single-quoted.
bool NeedsQuotes(std::string_view s) {
  if (s.empty()) return true;
  static constexpr std::string_view kFirst = "-?:,[]{}#&*!|>'\"%@`";
  if (kFirst.find(s.front()) != std::string_view::npos) {
    // "-", "?" and ":" are plain when followed by a non-space.
    const bool followed = s.size() > 1 && s[1] != ' ';
    if (!((s.front() == '-' || s.front() == '?' || s.front() == ':') && followed)) return true;
  }
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return true;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return true;
  }
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

void AppendYamlString(std::string_view s, std::string* out) {
  if (s.empty() || ResolvesToOtherType(s) || s.find('\n') != std::string_view::npos ||
      std::any_of(s.begin(), s.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    json::AppendQuoted(s, out);  // JSON's escapes are valid in a double-quoted YAML scalar.
    return;
  }
  if (!NeedsQuotes(s)) {
    *out += s;
    return;
  }
  *out += '\'';
  for (char c : s) {
    if (c == '\'') *out += '\'';
    *out += c;
  }
  *out += '\'';
}

void AppendScalar(const json::Value& v, std::string* out) {
  if (v.is_string()) {
    AppendYamlString(v.as_string(), out);
  } else if (v.is_null()) {
    *out += "null";
  } else if (v.is_object()) {
    *out += "{}";
  } else if (v.is_array()) {
    *out += "[]";
  } else {
    json::SerializeTo(v, out);
  }
}

bool IsBlock(const json::Value& v) {
  return (v.is_object() && !v.as_object().empty()) || (v.is_array() && !v.as_array().empty());
}

void AppendYaml(const json::Value& v, int indent, std::string* out);

void AppendYamlObject(const json::Value& v, int indent, std::string* out) {
  std::vector<const json::Value::Member*> members;
  for (const auto& m : v.as_object()) members.push_back(&m);
  std::sort(members.begin(), members.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* m : members) {
    *out += std::string(indent, ' ');
    AppendYamlString(m->first, out);
    *out += ':';
    if (IsBlock(m->second)) {
      *out += '\n';
      // A list under a key sits at the key's indentation; a map goes two deeper.
      AppendYaml(m->second, m->second.is_array() ? indent : indent + 2, out);
    } else {
      *out += ' ';
      AppendScalar(m->second, out);
      *out += '\n';
    }
  }
}

void AppendYaml(const json::Value& v, int indent, std::string* out) {
  if (v.is_object() && !v.as_object().empty()) {
    AppendYamlObject(v, indent, out);
  } else if (v.is_array() && !v.as_array().empty()) {
    for (const auto& item : v.as_array()) {
      *out += std::string(indent, ' ') + "- ";
      if (item.is_object() && !item.as_object().empty()) {
        std::string nested;
        AppendYamlObject(item, indent + 2, &nested);
        *out += nested.substr(indent + 2);  // the first key on the dash's line
      } else if (item.is_array() && !item.as_array().empty()) {
        std::string nested;
        AppendYaml(item, indent + 2, &nested);
        *out += nested.substr(indent + 2);
      } else {
        AppendScalar(item, out);
        *out += '\n';
      }
    }
  } else {
    std::string scalar;
    AppendScalar(v, &scalar);
    *out += std::string(indent, ' ') + scalar + '\n';
  }
}

}  // namespace

std::string IndentedJson(const json::Value& v) {
  std::string out;
  AppendIndented(v, 0, &out);
  return out;
}

std::string Yaml(const json::Value& v) {
  std::string out;
  AppendYaml(v, 0, &out);
  return out;
}

}  // namespace kcm::server
