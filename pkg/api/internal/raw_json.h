// Edits of an object's JSON text without a document model: find, replace, insert or remove one
// member along a path of keys, copying every other byte verbatim. The write path (status, scale
// and annotation updates of ReplicaSets and Deployments, object_builders.cc) used to parse the
// whole object into a json::Value and serialize it again for a change of a few members; these
// splice the change in instead, so unmodelled fields survive byte for byte (decision 1).
//
// Every function returns nullopt when it cannot be sure of the answer — text that is not a
// well-formed object where one is expected, a key along the path written with escapes or present
// twice, an intermediate value that is not an object — and the caller then falls back to the
// json::Value path, so these never decide differently from it. Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kcm::api::internal {

using RawPath = std::initializer_list<std::string_view>;

// One member of an object: [begin, value_end) spans from the key's opening quote to the end of
// its value; `key` is the key's raw text between the quotes (escapes not decoded).
struct RawMember {
  std::string_view key;
  size_t begin = 0;
  size_t value_begin = 0;
  size_t value_end = 0;
};

// The members of the object whose '{' is at `open`, and the index of its '}' in *close. nullopt
// when the text there is not `{ "key": value, ... }`.
std::optional<std::vector<RawMember>> RawObjectMembers(std::string_view s, size_t open,
                                                       size_t* close);

// The member named `key` among `members`: nullptr when absent. Sets *ambiguous when `key` is
// present twice or some key has escapes (it might spell `key`).
const RawMember* FindRawMember(const std::vector<RawMember>& members, std::string_view key,
                               bool* ambiguous);

// `json` with the member at `path` set to `value_text` (a JSON value's text): its value replaced
// in place when present, else a member appended to its parent object, with missing intermediate
// objects created.
std::optional<std::string> RawSetMember(std::string_view json, RawPath path,
                                        std::string_view value_text);

// `json` without the member at `path` (and one separating comma); unchanged when absent.
std::optional<std::string> RawEraseMember(std::string_view json, RawPath path);

// What RawEraseMember cuts, as the range [*begin, *end) of `json`. False when absent (nothing
// set); nullopt as above.
std::optional<bool> RawEraseRange(std::string_view json, RawPath path, size_t* begin, size_t* end);

// The value of the member at `path`: [*begin, *end) of `json`. False when absent; nullopt as above.
std::optional<bool> RawFindValue(std::string_view json, RawPath path, size_t* begin, size_t* end);

}  // namespace kcm::api::internal
