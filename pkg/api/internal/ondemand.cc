#include "pkg/api/internal/ondemand.h"

namespace kcm::api::internal {

Error DecodeErrorAt(std::string_view path, simdjson::error_code ec) {
  return DecodeErrorAt(path, simdjson::error_message(ec));
}

simdjson::error_code ReadString(od::value v, std::string* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return ec;
  if (is_null) {
    out->clear();
    return simdjson::SUCCESS;
  }
  std::string_view s;
  if (auto ec = v.get_string().get(s); ec) return ec;
  // A fresh string is allocated to size; assign() into a short string's buffer would round the
  // capacity up to twice the short-string size (16 B more on every cached pod's name).
  if (out->capacity() < s.size()) {
    *out = std::string(s);
  } else {
    out->assign(s.data(), s.size());
  }
  return simdjson::SUCCESS;
}

simdjson::error_code ReadStringView(od::value v, std::string_view* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return ec;
  if (is_null) {
    *out = {};
    return simdjson::SUCCESS;
  }
  return v.get_string().get(*out);
}

simdjson::error_code ReadInt(od::value v, int64_t min, int64_t max, int64_t* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return ec;
  if (is_null) {
    *out = 0;
    return simdjson::SUCCESS;
  }
  int64_t n = 0;
  if (auto ec = v.get_int64().get(n); ec) return ec;
  if (n < min || n > max) return simdjson::NUMBER_OUT_OF_RANGE;
  *out = n;
  return simdjson::SUCCESS;
}

simdjson::error_code ReadBool(od::value v, bool* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return ec;
  if (is_null) {
    *out = false;
    return simdjson::SUCCESS;
  }
  return v.get_bool().get(*out);
}

simdjson::error_code RawJson(od::value v, std::string_view* out) {
  od::json_type t;
  if (auto ec = v.type().get(t); ec) return ec;
  if (t == od::json_type::object) {
    od::object o;
    if (auto ec = v.get_object().get(o); ec) return ec;
    return o.raw_json().get(*out);
  }
  if (t == od::json_type::array) {
    od::array a;
    if (auto ec = v.get_array().get(a); ec) return ec;
    return a.raw_json().get(*out);
  }
  std::string_view tok = v.raw_json_token();
  while (!tok.empty() &&
         (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t')) {
    tok.remove_suffix(1);
  }
  *out = tok;
  return simdjson::SUCCESS;
}

}  // namespace kcm::api::internal
