// Decoding a failed response into kcm::Error (k8s.io/apimachinery/pkg/api/errors, behaviour 1.7).
// The vocabulary — reasons, predicates, transport causes — is pkg/util/errors.h. Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "pkg/util/errors.h"

namespace kcm::client {

// The most of an error answer's text (a body that is not a Status) an Error keeps: client-go's
// maxUnstructuredResponseTextBytes. A longer text is cut and ends in " [truncated]".
inline constexpr std::size_t kMaxErrorTextBytes = 2048;

// The error for an HTTP answer with a non-2xx `code`: the body's Status (kind "Status") when it
// is one, else a reason synthesized from the code (404 NotFound, 409 Conflict, 410 Expired, ...)
// with the body text as message (as upstream's newUnstructuredResponseError).
Error DecodeApiError(int code, std::string_view body);

// Decodes a metav1.Status JSON object (e.g. the object of a watch ERROR event); nullopt when the
// text is not JSON or not an object of kind Status.
std::optional<Error> DecodeStatus(std::string_view status_json);

}  // namespace kcm::client
