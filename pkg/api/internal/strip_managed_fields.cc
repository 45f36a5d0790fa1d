#include "pkg/api/internal/strip_managed_fields.h"

#include <cstddef>

#include "pkg/api/internal/raw_json_lex.h"

namespace kcm::api::internal {
namespace {

// Finds the member `key` of the object whose '{' is at `open`: sets [*member_begin, *member_end)
// to the span from the key's opening quote to the end of its value and returns true.
bool FindMember(std::string_view s, size_t open, std::string_view key, size_t* member_begin,
                size_t* value_begin, size_t* member_end) {
  size_t i = SkipJsonSpace(s, open + 1);
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = SkipJsonString(s, i);
    const std::string_view name = s.substr(i + 1, key_end - i - 2);
    size_t colon = SkipJsonSpace(s, key_end);
    if (colon >= s.size() || s[colon] != ':') return false;
    const size_t v = SkipJsonSpace(s, colon + 1);
    const size_t end = SkipJsonValue(s, v);
    if (name == key) {
      *member_begin = i;
      *value_begin = v;
      *member_end = end;
      return true;
    }
    i = SkipJsonSpace(s, end);
    if (i >= s.size() || s[i] != ',') return false;
    i = SkipJsonSpace(s, i + 1);
  }
  return false;
}

}  // namespace

bool ManagedFieldsRange(std::string_view json, size_t* cut_begin, size_t* cut_end) {
  const size_t open = SkipJsonSpace(json, 0);
  size_t meta_begin = 0, meta_value = 0, meta_end = 0;
  if (open >= json.size() || json[open] != '{' ||
      !FindMember(json, open, "metadata", &meta_begin, &meta_value, &meta_end) ||
      json[meta_value] != '{') {
    return false;
  }
  size_t begin = 0, value = 0, end = 0;
  if (!FindMember(json, meta_value, "managedFields", &begin, &value, &end)) return false;
  // Remove the member with the comma after it, or, when it is the last member, the one before.
  const size_t after = SkipJsonSpace(json, end);
  if (after < json.size() && json[after] == ',') {
    end = SkipJsonSpace(json, after + 1);
  } else {
    size_t before = begin;
    while (before > meta_value + 1 && IsJsonSpace(json[before - 1])) --before;
    if (json[before - 1] == ',') begin = before - 1;
  }
  *cut_begin = begin;
  *cut_end = end;
  return true;
}

std::string StripManagedFields(std::string_view json) {
  size_t begin = 0, end = 0;
  if (!ManagedFieldsRange(json, &begin, &end)) return std::string(json);
  std::string out;
  out.reserve(json.size() - (end - begin));
  out.append(json.substr(0, begin));
  out.append(json.substr(end));
  return out;
}

}  // namespace kcm::api::internal
