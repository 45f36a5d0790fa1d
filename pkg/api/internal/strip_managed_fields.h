// StripManagedFields: an object's JSON text without `metadata.managedFields`, for the kinds whose
// raw JSON we cache and write back whole (ReplicaSets, Deployments). managedFields are about half
// of such an object's bytes and nothing of ours reads them; an update whose body has no
// managedFields keeps the stored ones (the API server's field manager falls back to the live
// object's, decodeLiveOrNew), so dropping them loses nothing on a write.
// Private to pkg/api .cc files (it includes simdjson through ondemand.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pkg/api/internal/ondemand.h"

namespace kcm::api::internal {

// `json` is one well-formed JSON object (as simdjson accepted it). Returns it with the member
// "managedFields" of the top-level "metadata" object removed, along with one separating comma;
// anything else — including "managedFields" keys elsewhere and inside strings — is kept byte for
// byte. Returns `json` unchanged when there is no such member, or when a key of the top-level or
// metadata object is written with escapes, or a key on the path repeats (we cannot be sure which
// member the server would read). The decoders use ManagedFieldsRange below on their own parse;
// this whole-text form serves code built without pkg/api's SIMD target (KCM_API_SIMD: its tests),
// where `od` names another simdjson implementation than the one ManagedFieldsRange is built for.
std::string StripManagedFields(std::string_view json);

// The same cut as a range: [*begin, *end) of `json` is what StripManagedFields removes, *found
// false (and nothing else set) when it removes nothing. `doc` is a document its parser iterates
// over `json` (padded): the walk follows simdjson's structural index, skipping spec and status
// without reading their bytes, and rewinds `doc` before and after, so the caller decodes it next.
// An error is simdjson's on text it does not accept; `doc` is then unusable (not rewound).
simdjson::error_code ManagedFieldsRange(od::document& doc, std::string_view json, size_t* begin,
                                        size_t* end, bool* found);

}  // namespace kcm::api::internal
