// The one error vocabulary of the code base (k8s.io/apimachinery/pkg/api/errors): the Error value,
// the API StatusReasons and the predicates every layer classifies errors with, and the typed cause
// of a transport failure. pkg/client fills these in (from a Status body, an HTTP code or a
// failed socket/TLS step); pkg/cache, pkg/informers and the controllers only read them —
// nobody re-derives a classification from message text. Plain data, pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kcm {

// Why a request got no usable HTTP answer. Set by the transport from the step that failed (or by
// the client for a body or frame over its size limit); kNone on every other error.
enum class TransportCause : std::uint8_t {
  kNone,
  kConnectionRefused,  // nothing listens (an API server restarting): a watch re-tries it
  kDNS,                // the host name did not resolve
  kTimedOut,           // connect timeout, total timeout, or no progress for the stall limit
  kConnectionReset,    // the connection broke after it was established
  kTLS,                // handshake or verification failed
  kTooLarge,           // a response body or watch frame over the client's size limit
  kOther,
};
std::string_view TransportCauseName(TransportCause cause);

namespace errors {

// metav1.StatusReason values: the reasons an API server sends (or the client synthesizes from a
// bare HTTP code, as upstream's NewGenericServerResponse). Local errors never use these; see
// LocalReason.
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

inline constexpr std::string_view kApiReasons[] = {
    kNotFound,
    kAlreadyExists,
    kConflict,
    kGone,
    kExpired,
    kInvalid,
    kBadRequest,
    kForbidden,
    kUnauthorized,
    kTooManyRequests,
    kTimeout,
    kServerTimeout,
    kInternalError,
    kServiceUnavailable,
    kMethodNotAllowed,
    kNotAcceptable,
    kUnsupportedMediaType,
    kRequestEntityTooLarge,
    kUnknown,
};

// Client-side, code 500: a watch stream that could not be decoded (upstream's reporter uses the
// same word for the cause of its synthetic InternalError).
inline constexpr std::string_view kClientWatchDecoding = "ClientWatchDecoding";
// Local reasons shared across layers.
inline constexpr std::string_view kCanceled = "Canceled";
inline constexpr std::string_view kStopRequested = "StopRequested";
}  // namespace reason

// details.causes[].reason values the client code looks at.
namespace cause {
inline constexpr std::string_view kResourceVersionTooLarge = "ResourceVersionTooLarge";
inline constexpr std::string_view kNamespaceTerminating = "NamespaceTerminating";
}  // namespace cause

constexpr bool IsApiReason(std::string_view r) {
  for (std::string_view k : reason::kApiReasons) {
    if (k == r) return true;
  }
  return false;
}

}  // namespace errors

// The reason of a local (non-API) error, checked at compile time: a local error may not borrow an
// API reason, or IsNotFound & co. would misread it (a failed local lookup is not a 404).
class LocalReason {
 public:
  consteval LocalReason(const char* r) : r_(Check(r)) {}  // NOLINT(google-explicit-constructor)
  consteval LocalReason(std::string_view r)               // NOLINT(google-explicit-constructor)
      : r_(Check(r)) {}
  std::string_view view() const { return r_; }

 private:
  static consteval std::string_view Check(std::string_view r) {
    if (errors::IsApiReason(r)) {
      throw "a local error reason must not be an API StatusReason";
    }
    return r;
  }
  std::string_view r_;
};

struct Error {
  int code = 0;        // HTTP status; 0 for local or transport errors.
  std::string reason;  // an API StatusReason ("NotFound", ...) or a local reason.
  std::string message;
  std::vector<std::string> causes;                   // details.causes[].reason, in order.
  TransportCause transport = TransportCause::kNone;  // set only on transport failures

  static Error Local(LocalReason reason, std::string message) {
    return Error{0, std::string(reason.view()), std::move(message), {}};
  }
  // A request that got no usable HTTP answer.
  static Error Transport(TransportCause cause, std::string message) {
    return Error{0, "", std::move(message), {}, cause};
  }
  std::string ToString() const;
};

namespace errors {

// A 404 as a lister or cache returns it (upstream's errors.NewNotFound).
Error NewNotFound(std::string_view resource, std::string_view name);
// The reason for a bare HTTP code.
std::string_view ReasonForCode(int code);

// Each Is* matches its reason, or (as upstream's reasonAndCodeForError) a reason that is not an
// API reason together with the matching HTTP code. Local errors have code 0 and a non-API reason,
// so they never match.
bool IsNotFound(const Error& e);
bool IsAlreadyExists(const Error& e);
bool IsConflict(const Error& e);
bool IsInvalid(const Error& e);
bool IsBadRequest(const Error& e);
bool IsForbidden(const Error& e);
bool IsUnauthorized(const Error& e);
bool IsTooManyRequests(const Error& e);
bool IsTimeout(const Error& e);  // reason Timeout (504): the server gave up, not the client
bool IsServerTimeout(const Error& e);
bool IsInternalError(const Error& e);
bool IsServiceUnavailable(const Error& e);
// A bare 410 decodes as Expired; the reflector checks both of these.
bool IsResourceExpired(const Error& e);  // reason Expired
bool IsGone(const Error& e);             // reason Gone
bool HasCause(const Error& e, std::string_view cause_reason);
// A LIST/WATCH at a resourceVersion newer than the server has (cause ResourceVersionTooLarge).
// Upstream also matches the message of 1.17–1.18.5 servers, which predate the cause; we do not
// read messages.
bool IsTooLargeResourceVersion(const Error& e);
// A create refused because the namespace is being deleted.
bool IsNamespaceTerminating(const Error& e);

// Transport failures, by their typed cause.
inline bool IsTransport(const Error& e) {
  return e.transport != TransportCause::kNone;
}
inline bool IsConnectionRefused(const Error& e) {
  return e.transport == TransportCause::kConnectionRefused;
}
inline bool IsConnectionReset(const Error& e) {
  return e.transport == TransportCause::kConnectionReset;
}
// The client gave up waiting (connect, total or stall limit). Not IsTimeout, which is the server's.
inline bool IsClientTimeout(const Error& e) {
  return e.transport == TransportCause::kTimedOut;
}
inline bool IsTooLarge(const Error& e) {
  return e.transport == TransportCause::kTooLarge;
}
inline bool IsCanceled(const Error& e) {
  return e.code == 0 && e.reason == reason::kCanceled;
}
// The local error of work refused or cut short because the caller was stopped (a context's
// cancellation upstream): what IsCanceled recognizes.
inline Error Canceled(std::string message) {
  return Error::Local(reason::kCanceled, std::move(message));
}

}  // namespace errors
}  // namespace kcm
