// StripManagedFields: an object's JSON text without `metadata.managedFields`, for the kinds whose
// raw JSON we cache and write back whole (ReplicaSets, Deployments). managedFields are about half
// of such an object's bytes and nothing of ours reads them; an update whose body has no
// managedFields keeps the stored ones (the API server's field manager falls back to the live
// object's, decodeLiveOrNew), so dropping them loses nothing on a write.
#pragma once

#include <string>
#include <string_view>

namespace kcm::api::internal {

// `json` is one well-formed JSON object (as simdjson accepted it). Returns it with the member
// "managedFields" of the top-level "metadata" object removed, along with one separating comma;
// anything else — including "managedFields" keys elsewhere and inside strings — is kept byte for
// byte. Returns `json` unchanged when there is no such member, or when a key on that path is
// written with escapes or repeated (raw_json.h cannot be sure which member is meant).
std::string StripManagedFields(std::string_view json);

// The same cut as a range: [*begin, *end) of `json` is what StripManagedFields removes; false (and
// nothing set) when it removes nothing. For callers that assemble the result themselves.
bool ManagedFieldsRange(std::string_view json, size_t* begin, size_t* end);

}  // namespace kcm::api::internal
