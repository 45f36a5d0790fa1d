#include "pkg/api/internal/raw_json.h"

#include "pkg/api/internal/raw_json_lex.h"
#include "pkg/api/json.h"
#include "pkg/api/json_find.h"

namespace kcm::api::internal {
namespace {

// The object member at the end of `path`, found from the top-level object of `json`.
struct Located {
  std::vector<RawMember> parent_members;  // the members of the object holding the last key
  size_t parent_close = 0;                // that object's '}'
  size_t index = 0;                       // the member's index in parent_members, when found
  bool found = false;
  size_t depth = 0;  // keys of `path` found (== path.size() when `found`)
  const RawMember* member() const { return found ? &parent_members[index] : nullptr; }
};

// Walks `path` from the top-level object. nullopt when the walk meets something it cannot be
// sure of (see raw_json.h); stops early, not found, at the first absent key.
std::optional<Located> Locate(std::string_view json, RawPath path) {
  size_t open = SkipJsonSpace(json, 0);
  if (path.size() == 0 || open >= json.size() || json[open] != '{') return std::nullopt;
  Located out;
  for (std::string_view key : path) {
    auto members = RawObjectMembers(json, open, &out.parent_close);
    if (!members) return std::nullopt;
    out.parent_members = std::move(*members);
    bool ambiguous = false;
    const RawMember* m = FindRawMember(out.parent_members, key, &ambiguous);
    if (ambiguous) return std::nullopt;
    out.found = m != nullptr;
    if (!out.found) return out;
    out.index = static_cast<size_t>(m - out.parent_members.data());
    if (++out.depth == path.size()) return out;
    open = m->value_begin;
    if (json[open] != '{') return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<RawMember>> RawObjectMembers(std::string_view s, size_t open,
                                                       size_t* close) {
  if (open >= s.size() || s[open] != '{') return std::nullopt;
  std::vector<RawMember> members;
  size_t i = SkipJsonSpace(s, open + 1);
  if (i < s.size() && s[i] == '}') {
    *close = i;
    return members;
  }
  while (i < s.size() && s[i] == '"') {
    const size_t key_end = SkipJsonString(s, i);
    if (key_end > s.size() || key_end < i + 2 || s[key_end - 1] != '"') return std::nullopt;
    const size_t colon = SkipJsonSpace(s, key_end);
    if (colon >= s.size() || s[colon] != ':') return std::nullopt;
    const size_t v = SkipJsonSpace(s, colon + 1);
    const size_t end = SkipJsonValue(s, v);
    // A member's value ends before its object's '}', so it cannot reach the end of the text.
    if (v >= s.size() || end <= v || end >= s.size()) return std::nullopt;
    members.push_back(RawMember{s.substr(i + 1, key_end - i - 2), i, v, end});
    i = SkipJsonSpace(s, end);
    if (i >= s.size()) return std::nullopt;
    if (s[i] == '}') {
      *close = i;
      return members;
    }
    if (s[i] != ',') return std::nullopt;
    i = SkipJsonSpace(s, i + 1);
  }
  return std::nullopt;
}

const RawMember* FindRawMember(const std::vector<RawMember>& members, std::string_view key,
                               bool* ambiguous) {
  const RawMember* found = nullptr;
  for (const RawMember& m : members) {
    if (m.key.find('\\') != std::string_view::npos) *ambiguous = true;
    if (m.key == key) {
      if (found != nullptr) *ambiguous = true;
      found = &m;
    }
  }
  return found;
}

std::optional<std::string> RawSetMember(std::string_view json, RawPath path,
                                        std::string_view value_text) {
  auto at = Locate(json, path);
  if (!at) return std::nullopt;
  std::string out;
  out.reserve(json.size() + value_text.size() + 64);
  if (const RawMember* m = at->member(); m != nullptr) {
    out.append(json.substr(0, m->value_begin));
    out.append(value_text);
    out.append(json.substr(m->value_end));
    return out;
  }
  // Append `"k_d":{"k_d+1":{ ... "k_n":value}}` to the object where the walk stopped.
  out.append(json.substr(0, at->parent_close));
  if (!at->parent_members.empty()) out.push_back(',');
  size_t opened = 0;
  size_t i = 0;
  for (std::string_view key : path) {
    if (i++ < at->depth) continue;
    if (i > at->depth + 1) {
      out.push_back('{');
      ++opened;
    }
    json::AppendQuoted(key, &out);
    out.push_back(':');
  }
  out.append(value_text);
  out.append(opened, '}');
  out.append(json.substr(at->parent_close));
  return out;
}

std::optional<bool> RawEraseRange(std::string_view json, RawPath path, size_t* begin, size_t* end) {
  auto at = Locate(json, path);
  if (!at) return std::nullopt;
  if (!at->found) return false;
  const std::vector<RawMember>& ms = at->parent_members;
  const size_t idx = at->index;
  *begin = ms[idx].begin;
  *end = ms[idx].value_end;
  if (idx + 1 < ms.size()) {
    *end = ms[idx + 1].begin;  // with the comma after it
  } else if (idx > 0) {
    *begin = ms[idx - 1].value_end;  // the last member: with the comma before it
  }
  return true;
}

std::optional<std::string> RawEraseMember(std::string_view json, RawPath path) {
  size_t begin = 0, end = 0;
  std::optional<bool> found = RawEraseRange(json, path, &begin, &end);
  if (!found) return std::nullopt;
  if (!*found) return std::string(json);
  std::string out;
  out.reserve(json.size() - (end - begin));
  out.append(json.substr(0, begin));
  out.append(json.substr(end));
  return out;
}

std::optional<bool> RawFindValue(std::string_view json, RawPath path, size_t* begin, size_t* end) {
  auto at = Locate(json, path);
  if (!at) return std::nullopt;
  if (!at->found) return false;
  *begin = at->member()->value_begin;
  *end = at->member()->value_end;
  return true;
}

}  // namespace kcm::api::internal

namespace kcm::api::json {

std::optional<std::string> FindPlainString(std::string_view text, Path path) {
  size_t begin = 0, end = 0;
  std::optional<bool> found = internal::RawFindValue(text, path, &begin, &end);
  if (!found || !*found || end - begin < 2 || text[begin] != '"') return std::nullopt;
  std::string_view inner = text.substr(begin + 1, end - begin - 2);
  if (inner.find('\\') != std::string_view::npos) return std::nullopt;
  return std::string(inner);
}

}  // namespace kcm::api::json
