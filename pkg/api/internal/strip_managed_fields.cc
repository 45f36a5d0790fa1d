#include "pkg/api/internal/strip_managed_fields.h"

#include <cstddef>
#include <optional>
#include <utility>

#include "pkg/api/internal/raw_json_lex.h"

namespace kcm::api::internal {
namespace {

// A member's key as written in `json` (between its quotes, escapes intact) and where its opening
// quote is. The key's text lies in `json`: field::key() points just past the opening quote.
struct RawKey {
  std::string_view text;
  size_t quote = 0;
  bool escaped = false;
};

std::optional<RawKey> KeyOf(od::field& f, std::string_view json) {
  const char* begin = f.key().raw();
  if (begin <= json.data() || begin > json.data() + json.size()) return std::nullopt;
  RawKey key;
  key.quote = static_cast<size_t>(begin - json.data()) - 1;
  const size_t close = SkipJsonString(json, key.quote);  // just past the closing quote
  if (close > json.size() || close < key.quote + 2) return std::nullopt;
  key.text = json.substr(key.quote + 1, close - key.quote - 2);
  key.escaped = key.text.find('\\') != std::string_view::npos;
  return key;
}

// Where metadata.managedFields is: [begin, value_end) from its key's quote to the end of its
// value; `found` false when absent or ambiguous (see the header).
struct Member {
  size_t begin = 0;
  size_t value_end = 0;
  bool found = false;
};

// Walks the members of the object `v` (anything else is left for the walk to skip: type() only
// peeks) and calls on_member(field, key) for each one named `name`. *unique is false when `name`
// appears more than once or a key has escapes (it might spell `name`). Any error of simdjson's is
// returned as it is: it may have abandoned the document, which must then not be rewound.
template <typename Fn>
simdjson::error_code ForEachMemberNamed(od::value v, std::string_view json, std::string_view name,
                                        bool* unique, Fn&& on_member) {
  *unique = true;
  od::json_type type;
  if (auto ec = v.type().get(type); ec) return ec;
  if (type != od::json_type::object) return simdjson::SUCCESS;
  od::object object;
  if (auto ec = v.get_object().get(object); ec) return ec;
  int seen = 0;
  for (auto field : object) {
    od::field f;
    if (auto ec = std::move(field).get(f); ec) return ec;
    std::optional<RawKey> key = KeyOf(f, json);
    if (!key || key->escaped) *unique = false;
    if (!key || key->text != name) continue;
    if (++seen > 1) *unique = false;
    if (auto ec = on_member(f, *key); ec) return ec;
  }
  return simdjson::SUCCESS;
}

// The member's extent: from its key's quote to its value's last byte (an array's raw text may
// run on over the whitespace after its ']').
simdjson::error_code MemberExtent(od::field& f, const RawKey& key, std::string_view json,
                                  Member* out) {
  std::string_view value;
  if (auto ec = RawJson(f.value(), &value); ec) return ec;
  size_t value_end = static_cast<size_t>(value.data() + value.size() - json.data());
  while (value_end > key.quote && IsJsonSpace(json[value_end - 1])) --value_end;
  *out = Member{key.quote, value_end, true};
  return simdjson::SUCCESS;
}

simdjson::error_code Find(od::document& doc, std::string_view json, Member* out) {
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return ec;
  Member found;
  bool metadata_unique = false, managed_unique = false;
  int metadata_seen = 0;
  auto in_metadata = [&](od::field& metadata, const RawKey&) -> simdjson::error_code {
    if (++metadata_seen > 1) return simdjson::SUCCESS;  // ambiguous already: not entered
    return ForEachMemberNamed(
        metadata.value(), json, "managedFields", &managed_unique,
        [&](od::field& f, const RawKey& key) { return MemberExtent(f, key, json, &found); });
  };
  if (auto ec = ForEachMemberNamed(root, json, "metadata", &metadata_unique, in_metadata); ec) {
    return ec;
  }
  // Without a metadata object `found` stays unset.
  if (metadata_unique && managed_unique) *out = found;
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code ManagedFieldsRange(od::document& doc, std::string_view json, size_t* cut_begin,
                                        size_t* cut_end, bool* found) {
  *found = false;
  doc.rewind();
  Member m;
  if (auto ec = Find(doc, json, &m); ec) return ec;
  doc.rewind();
  if (!m.found) return simdjson::SUCCESS;
  // With one separating comma: the one after the member when another follows (up to that
  // member's key), else the one before it (from the end of the previous value); a member alone
  // goes by itself.
  size_t begin = m.begin;
  size_t end = m.value_end;
  const size_t after = SkipJsonSpace(json, end);
  if (after < json.size() && json[after] == ',') {
    end = SkipJsonSpace(json, after + 1);
  } else {
    size_t before = begin;
    while (before > 0 && IsJsonSpace(json[before - 1])) --before;
    if (before > 0 && json[before - 1] == ',') {
      --before;
      while (before > 0 && IsJsonSpace(json[before - 1])) --before;
      begin = before;
    }
  }
  *cut_begin = begin;
  *cut_end = end;
  *found = true;
  return simdjson::SUCCESS;
}

std::string StripManagedFields(std::string_view json) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  size_t begin = 0, end = 0;
  bool found = false;
  if (parser.iterate(padded).get(doc) ||
      ManagedFieldsRange(doc, std::string_view(padded.data(), padded.size()), &begin, &end,
                         &found) ||
      !found) {
    return std::string(json);
  }
  std::string out;
  out.reserve(json.size() - (end - begin));
  out.append(json.substr(0, begin));
  out.append(json.substr(end));
  return out;
}

}  // namespace kcm::api::internal
