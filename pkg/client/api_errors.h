// Typed API errors (k8s.io/apimachinery/pkg/api/errors, spec 1.7): decode a failed response into
// kcm::Error and classify it. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::client {

// StatusReason values (metav1.StatusReason) and the client's own reasons.
namespace reason {
inline constexpr std::string_view kNotFound = "NotFound";
inline constexpr std::string_view kAlreadyExists = "AlreadyExists";
inline constexpr std::string_view kConflict = "Conflict";
inline constexpr std::string_view kGone = "Gone";
inline constexpr std::string_view kExpired = "Expired";
inline constexpr std::string_view kInvalid = "Invalid";
inline constexpr std::string_view kBadRequest = "BadRequest";
inline constexpr std::string_view kForbidden = "Forbidden";
inline constexpr std::string_view kUnauthorized = "Unauthorized";
inline constexpr std::string_view kTooManyRequests = "TooManyRequests";
inline constexpr std::string_view kTimeout = "Timeout";
inline constexpr std::string_view kServerTimeout = "ServerTimeout";
inline constexpr std::string_view kInternalError = "InternalError";
inline constexpr std::string_view kServiceUnavailable = "ServiceUnavailable";
inline constexpr std::string_view kMethodNotAllowed = "MethodNotAllowed";
inline constexpr std::string_view kNotAcceptable = "NotAcceptable";
inline constexpr std::string_view kUnsupportedMediaType = "UnsupportedMediaType";
inline constexpr std::string_view kRequestEntityTooLarge = "RequestEntityTooLarge";
inline constexpr std::string_view kUnknown = "Unknown";
// Client-side: a watch stream that could not be decoded (code 500).
inline constexpr std::string_view kClientWatchDecoding = "ClientWatchDecoding";
// Client-side, code 0: no HTTP answer (connection refused/reset, TLS failure, timeout).
inline constexpr std::string_view kTransport = "Transport";
inline constexpr std::string_view kCanceled = "Canceled";
}  // namespace reason

// details.causes[].reason values the controllers look at.
namespace cause {
inline constexpr std::string_view kResourceVersionTooLarge = "ResourceVersionTooLarge";
inline constexpr std::string_view kNamespaceTerminating = "NamespaceTerminating";
}  // namespace cause

// The error for an HTTP answer with a non-2xx `code`: the body's Status (kind "Status") when it
// is one, else a reason synthesized from the code (404 NotFound, 409 Conflict, 410 Gone, ...)
// with the body text as message (as upstream's newUnstructuredResponseError).
Error DecodeApiError(int code, std::string_view body);

// Decodes a metav1.Status JSON object (e.g. the object of a watch ERROR event); nullopt when the
// text is not JSON or not an object of kind Status.
std::optional<Error> DecodeStatus(std::string_view status_json);

// The reason for a bare HTTP code (what upstream's NewGenericServerResponse picks).
std::string_view ReasonForCode(int code);

bool IsNotFound(const Error& e);
bool IsAlreadyExists(const Error& e);
bool IsConflict(const Error& e);
bool IsInvalid(const Error& e);
bool IsForbidden(const Error& e);
bool IsUnauthorized(const Error& e);
bool IsTooManyRequests(const Error& e);
bool IsTimeout(const Error& e);
bool IsServerTimeout(const Error& e);
bool IsInternalError(const Error& e);
// Each Is* matches its reason, or (as upstream) a reason the client does not know with the
// matching HTTP code. A bare 410 decodes as Expired; the reflector checks both of these.
bool IsResourceExpired(const Error& e);  // reason Expired
bool IsGone(const Error& e);             // reason Gone
// A LIST/WATCH at a resourceVersion newer than the server has (cause ResourceVersionTooLarge).
bool IsTooLargeResourceVersion(const Error& e);
// A create refused because the namespace is being deleted.
bool IsNamespaceTerminating(const Error& e);
bool HasCause(const Error& e, std::string_view cause_reason);

}  // namespace kcm::client
