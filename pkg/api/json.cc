#include "pkg/api/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "pkg/api/internal/ondemand.h"
#include "pkg/util/utf8.h"

namespace kcm::api::json {
namespace {

namespace od = internal::od;

bool IsValidNumber(std::string_view s) {
  size_t i = 0;
  auto digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return false;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == s.size();
}

// Containers nested deeper than this are refused (DEPTH_ERROR). The on-demand parser does not
// enforce its max_depth while iterating, and each level below is a stack frame: 3,000 nested
// arrays overflowed the stack under ASan. simdjson's default limit, far above any object of ours.
constexpr int kMaxDepth = static_cast<int>(simdjson::DEFAULT_MAX_DEPTH);

// Recursive descent over an on-demand value, `depth` containers deep.
simdjson::error_code Build(od::value v, Value* out, int depth) {
  od::json_type t;
  if (auto ec = v.type().get(t); ec) return ec;
  switch (t) {
    case od::json_type::object: {
      if (depth >= kMaxDepth) return simdjson::DEPTH_ERROR;
      od::object o;
      if (auto ec = v.get_object().get(o); ec) return ec;
      Value obj = Value::MakeObject();
      for (auto field : o) {
        std::string_view key;
        if (auto ec = field.unescaped_key().get(key); ec) return ec;
        Value child;
        if (auto ec = Build(field.value(), &child, depth + 1); ec) return ec;
        // Duplicate keys: the last one wins, as in Go's encoding/json.
        obj.Set(key, std::move(child));
      }
      *out = std::move(obj);
      return simdjson::SUCCESS;
    }
    case od::json_type::array: {
      if (depth >= kMaxDepth) return simdjson::DEPTH_ERROR;
      od::array a;
      if (auto ec = v.get_array().get(a); ec) return ec;
      Value arr = Value::MakeArray();
      for (auto elem : a) {
        od::value ev;
        if (auto ec = std::move(elem).get(ev); ec) return ec;
        Value child;
        if (auto ec = Build(ev, &child, depth + 1); ec) return ec;
        arr.as_array().push_back(std::move(child));
      }
      *out = std::move(arr);
      return simdjson::SUCCESS;
    }
    case od::json_type::number: {
      std::string_view raw;
      if (auto ec = internal::RawJson(v, &raw); ec) return ec;
      if (!IsValidNumber(raw)) return simdjson::NUMBER_ERROR;
      *out = Value::NumberText(std::string(raw));
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto ec = v.get_string().get(s); ec) return ec;
      *out = Value::String(std::string(s));
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (auto ec = v.get_bool().get(b); ec) return ec;
      *out = Value::Bool(b);
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto ec = v.is_null().get(is_null); ec) return ec;
      if (!is_null) return simdjson::N_ATOM_ERROR;
      *out = Value();
      return simdjson::SUCCESS;
    }
  }
  return simdjson::TAPE_ERROR;
}

simdjson::error_code BuildDocument(od::document& doc, Value* out) {
  od::json_type t;
  if (auto ec = doc.type().get(t); ec) return ec;
  switch (t) {
    case od::json_type::object:
    case od::json_type::array: {
      od::value v;
      if (auto ec = doc.get_value().get(v); ec) return ec;
      return Build(v, out, 0);
    }
    case od::json_type::number: {
      std::string_view raw;
      if (auto ec = doc.raw_json_token().get(raw); ec) return ec;
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                              raw.back() == '\t')) {
        raw.remove_suffix(1);
      }
      if (!IsValidNumber(raw)) return simdjson::NUMBER_ERROR;
      *out = Value::NumberText(std::string(raw));
      return simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto ec = doc.get_string().get(s); ec) return ec;
      *out = Value::String(std::string(s));
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (auto ec = doc.get_bool().get(b); ec) return ec;
      *out = Value::Bool(b);
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (auto ec = doc.is_null().get(is_null); ec) return ec;
      if (!is_null) return simdjson::N_ATOM_ERROR;
      *out = Value();
      return simdjson::SUCCESS;
    }
  }
  return simdjson::TAPE_ERROR;
}

void AppendNumberCanonical(std::string_view text, std::string* out) {
  bool integer = text.find_first_of(".eE") == std::string_view::npos;
  if (integer) {
    int64_t n = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && p == text.data() + text.size()) {
      out->append(std::to_string(n));  // drops "-0" sign
      return;
    }
  }
  double d = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (ec != std::errc() || !std::isfinite(d)) {
    out->append(text);  // out of double range: keep the literal
    return;
  }
  if (std::trunc(d) == d && std::fabs(d) < 9007199254740992.0) {
    out->append(std::to_string(static_cast<int64_t>(d)));
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  out->append(buf, res.ptr);
}

bool IsEmptyish(const Value& v) {
  return v.is_null() || (v.is_object() && v.as_object().empty()) ||
         (v.is_array() && v.as_array().empty());
}

Value CanonicalImpl(const Value& v, CanonicalOptions opt) {
  switch (v.type()) {
    case Type::kNumber: {
      std::string s;
      AppendNumberCanonical(v.number_text(), &s);
      return Value::NumberText(std::move(s));
    }
    case Type::kArray: {
      Value::Array items;
      items.reserve(v.as_array().size());
      for (const Value& e : v.as_array()) items.push_back(CanonicalImpl(e, opt));
      return Value::MakeArray(std::move(items));
    }
    case Type::kObject: {
      Value::Object members;
      members.reserve(v.as_object().size());
      for (const auto& [k, child] : v.as_object()) {
        Value c = CanonicalImpl(child, opt);
        if (opt.drop_empty && IsEmptyish(c)) continue;
        members.emplace_back(k, std::move(c));
      }
      std::sort(members.begin(), members.end(),
                [](const Value::Member& a, const Value::Member& b) { return a.first < b.first; });
      return Value::MakeObject(std::move(members));
    }
    default:
      return v;
  }
}

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.v_ = b;
  return v;
}
Value Value::Int(int64_t n) {
  Value v;
  v.v_ = Num{std::to_string(n)};
  return v;
}
Value Value::NumberText(std::string text) {
  Value v;
  v.v_ = Num{std::move(text)};
  return v;
}
Value Value::String(std::string s) {
  Value v;
  v.v_ = std::move(s);
  return v;
}
Value Value::MakeArray(Array items) {
  Value v;
  v.v_ = std::move(items);
  return v;
}
Value Value::MakeObject(Object members) {
  Value v;
  v.v_ = std::move(members);
  return v;
}

std::optional<int64_t> Value::as_int64() const {
  if (!is_number()) return std::nullopt;
  std::string_view t = number_text();
  int64_t n = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return n;
}

const Value* Value::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& m : as_object()) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

Value* Value::Find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->Find(key));
}

Value& Value::Set(std::string_view key, Value v) {
  if (is_null()) v_ = Object{};
  Object& obj = as_object();
  for (auto& m : obj) {
    if (m.first == key) {
      m.second = std::move(v);
      return m.second;
    }
  }
  obj.emplace_back(std::string(key), std::move(v));
  return obj.back().second;
}

bool Value::Erase(std::string_view key) {
  if (!is_object()) return false;
  Object& obj = as_object();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it->first == key) {
      obj.erase(it);
      return true;
    }
  }
  return false;
}

Result<Value> Parse(std::string_view text) {
  simdjson::padded_string padded(text);
  od::parser parser;
  od::document doc;
  if (auto ec = parser.iterate(padded).get(doc); ec) return internal::DecodeErrorAt("", ec);
  Value out;
  if (auto ec = BuildDocument(doc, &out); ec) return internal::DecodeErrorAt("", ec);
  if (out.is_number()) {
    // A root number is read as a raw token (not consumed), so compare it with the whole text.
    size_t b = text.find_first_not_of(" \t\r\n");
    size_t e = text.find_last_not_of(" \t\r\n");
    if (text.substr(b, e - b + 1) != out.number_text()) {
      return internal::DecodeErrorAt("", "trailing content after JSON value");
    }
    return out;
  }
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS)
    return internal::DecodeErrorAt("", "trailing content after JSON value");
  return out;
}

void AppendQuoted(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Go's encoding/json coerces strings to valid UTF-8: a byte that is not is written as
      // U+FFFD, so a peer's text we pass on (an error in a condition or an event) stays JSON.
      char32_t cp = 0;
      const size_t n = utf8::SequenceLength(s.substr(i), &cp);
      if (n > 0) {
        i += n;
        continue;
      }
      out->append(s.data() + run, i - run);
      out->append(utf8::kReplacement);
      run = ++i;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out->append(s.data() + run, i - run);
    run = ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

void SerializeTo(const Value& v, std::string* out) {
  switch (v.type()) {
    case Type::kNull:
      out->append("null");
      return;
    case Type::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case Type::kNumber:
      out->append(v.number_text());
      return;
    case Type::kString:
      AppendQuoted(v.as_string(), out);
      return;
    case Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const Value& e : v.as_array()) {
        if (!first) out->push_back(',');
        first = false;
        SerializeTo(e, out);
      }
      out->push_back(']');
      return;
    }
    case Type::kObject: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, child] : v.as_object()) {
        if (!first) out->push_back(',');
        first = false;
        AppendQuoted(k, out);
        out->push_back(':');
        SerializeTo(child, out);
      }
      out->push_back('}');
      return;
    }
  }
}

std::string Serialize(const Value& v) {
  std::string out;
  SerializeTo(v, &out);
  return out;
}

Value Canonical(const Value& v, CanonicalOptions options) {
  return CanonicalImpl(v, options);
}

std::string CanonicalString(const Value& v, CanonicalOptions options) {
  return Serialize(Canonical(v, options));
}

bool SemanticEqual(const Value& a, const Value& b) {
  CanonicalOptions opt{.drop_empty = true};
  Value ca = Canonical(a, opt);
  Value cb = Canonical(b, opt);
  // A top-level empty value equals null, like the members it would be dropped from.
  if (IsEmptyish(ca) && IsEmptyish(cb)) return true;
  return ca == cb;
}

const Value* GetPath(const Value& root, Path path) {
  const Value* cur = &root;
  for (std::string_view key : path) {
    cur = cur->Find(key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

Status SetPath(Value& root, Path path, Value v) {
  if (path.size() == 0) {
    root = std::move(v);
    return OkStatus();
  }
  Value* cur = &root;
  size_t i = 0;
  for (std::string_view key : path) {
    if (!cur->is_null() && !cur->is_object()) {
      return Error::Local("InvalidPath",
                          "path segment before '" + std::string(key) + "' is not an object");
    }
    if (++i == path.size()) {
      cur->Set(key, std::move(v));
      return OkStatus();
    }
    Value* next = cur->Find(key);
    if (next == nullptr) next = &cur->Set(key, Value::MakeObject());
    cur = next;
  }
  return OkStatus();
}

bool ErasePath(Value& root, Path path) {
  Value* cur = &root;
  size_t i = 0;
  for (std::string_view key : path) {
    if (++i == path.size()) return cur->Erase(key);
    cur = cur->Find(key);
    if (cur == nullptr) return false;
  }
  return false;
}

}  // namespace kcm::api::json
