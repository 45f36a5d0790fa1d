#include "pkg/util/errors.h"

namespace kcm {

std::string_view TransportCauseName(TransportCause cause) {
  switch (cause) {
    case TransportCause::kNone:
      return "none";
    case TransportCause::kConnectionRefused:
      return "connection refused";
    case TransportCause::kDNS:
      return "DNS lookup failed";
    case TransportCause::kTimedOut:
      return "timed out";
    case TransportCause::kConnectionReset:
      return "connection reset";
    case TransportCause::kTLS:
      return "TLS failure";
    case TransportCause::kTooLarge:
      return "too large";
    case TransportCause::kOther:
      return "transport failure";
  }
  return "transport failure";
}

std::string Error::ToString() const {
  std::string out;
  if (transport != TransportCause::kNone) {
    out += "transport (" + std::string(TransportCauseName(transport)) + "): ";
  }
  if (code != 0) out += std::to_string(code) + " ";
  if (!reason.empty()) out += reason + ": ";
  out += message;
  return out;
}

namespace errors {
namespace {

// reason matches, or the reason is not a known API reason and the code says the same thing.
// "Unknown" counts as not known, as in upstream's knownReasons.
bool Matches(const Error& e, std::string_view r, int code) {
  if (e.reason == r) return true;
  const bool known = IsApiReason(e.reason) && e.reason != reason::kUnknown;
  return code != 0 && e.code == code && !known;
}

}  // namespace

std::string_view ReasonForCode(int code) {
  switch (code) {
    case 400:
      return reason::kBadRequest;
    case 401:
      return reason::kUnauthorized;
    case 403:
      return reason::kForbidden;
    case 404:
      return reason::kNotFound;
    case 405:
      return reason::kMethodNotAllowed;
    case 406:
      return reason::kNotAcceptable;
    case 409:
      return reason::kConflict;
    case 410:
      return reason::kExpired;
    case 413:
      return reason::kRequestEntityTooLarge;
    case 415:
      return reason::kUnsupportedMediaType;
    case 422:
      return reason::kInvalid;
    case 429:
      return reason::kTooManyRequests;
    case 500:
      return reason::kInternalError;
    case 503:
      return reason::kServiceUnavailable;
    case 504:
      return reason::kTimeout;
    default:
      return reason::kUnknown;
  }
}

Error NewNotFound(std::string_view resource, std::string_view name) {
  std::string message;
  if (!resource.empty()) message += std::string(resource) + " ";
  message += "\"" + std::string(name) + "\" not found";
  return Error{404, std::string(reason::kNotFound), std::move(message), {}};
}

bool HasCause(const Error& e, std::string_view cause_reason) {
  for (const auto& c : e.causes) {
    if (c == cause_reason) return true;
  }
  return false;
}

bool IsNotFound(const Error& e) {
  return Matches(e, reason::kNotFound, 404);
}
bool IsAlreadyExists(const Error& e) {
  return Matches(e, reason::kAlreadyExists, 0);
}
bool IsConflict(const Error& e) {
  return Matches(e, reason::kConflict, 409);
}
bool IsInvalid(const Error& e) {
  return Matches(e, reason::kInvalid, 422);
}
bool IsBadRequest(const Error& e) {
  return Matches(e, reason::kBadRequest, 400);
}
bool IsForbidden(const Error& e) {
  return Matches(e, reason::kForbidden, 403);
}
bool IsUnauthorized(const Error& e) {
  return Matches(e, reason::kUnauthorized, 401);
}
bool IsTooManyRequests(const Error& e) {
  return Matches(e, reason::kTooManyRequests, 429);
}
bool IsTimeout(const Error& e) {
  return Matches(e, reason::kTimeout, 504);
}
bool IsServerTimeout(const Error& e) {
  return Matches(e, reason::kServerTimeout, 0);
}
bool IsInternalError(const Error& e) {
  return Matches(e, reason::kInternalError, 500);
}
bool IsServiceUnavailable(const Error& e) {
  return Matches(e, reason::kServiceUnavailable, 503);
}
bool IsResourceExpired(const Error& e) {
  return Matches(e, reason::kExpired, 410);
}
bool IsGone(const Error& e) {
  return Matches(e, reason::kGone, 0);
}

bool IsTooLargeResourceVersion(const Error& e) {
  return HasCause(e, cause::kResourceVersionTooLarge);
}

bool IsNamespaceTerminating(const Error& e) {
  return HasCause(e, cause::kNamespaceTerminating);
}

}  // namespace errors
}  // namespace kcm
