#include "pkg/client/api_errors.h"

#include <simdjson.h>

#include <array>
#include <string>

#include "pkg/client/json_padding.h"

static_assert(kcm::client::kJsonPadding >= simdjson::SIMDJSON_PADDING,
              "kJsonPadding must cover simdjson's read-ahead");

namespace kcm::client {
namespace {

constexpr std::array kKnownReasons = {
    reason::kNotFound,
    reason::kAlreadyExists,
    reason::kConflict,
    reason::kGone,
    reason::kExpired,
    reason::kInvalid,
    reason::kBadRequest,
    reason::kForbidden,
    reason::kUnauthorized,
    reason::kTooManyRequests,
    reason::kTimeout,
    reason::kServerTimeout,
    reason::kInternalError,
    reason::kServiceUnavailable,
    reason::kMethodNotAllowed,
    reason::kNotAcceptable,
    reason::kUnsupportedMediaType,
    reason::kRequestEntityTooLarge,
};

bool KnownReason(std::string_view r) {
  for (auto k : kKnownReasons) {
    if (k == r) return true;
  }
  return false;
}

// reason matches, or the reason is not one we know and the code says the same thing.
bool Matches(const Error& e, std::string_view r, int code) {
  if (e.reason == r) return true;
  return code != 0 && e.code == code && !KnownReason(e.reason);
}

std::string_view DefaultMessage(int code) {
  switch (code) {
    case 404:
      return "the server could not find the requested resource";
    case 409:
      return "the server reported a conflict";
    case 401:
      return "the server has asked for the client to provide credentials";
    case 403:
      return "the server does not allow access to the requested resource";
    case 410:
      return "the requested resource version is too old";
    case 429:
      return "the server has received too many requests and has asked us to try again later";
    case 504:
      return "the server was unable to return a response in the time allotted";
    default:
      return "the server returned an error";
  }
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

std::optional<Error> DecodeStatus(std::string_view status_json) {
  // The body is usually not padded (an error body or a slice of a frame), so copy it once.
  simdjson::padded_string padded(status_json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::ondemand::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  Error out;
  bool is_status = false;
  // Fields are read in document order so the on-demand iterator never rewinds.
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return std::nullopt;
    }
    auto value = field.value();
    std::string_view s;
    if (key == "kind") {
      if (value.get_string().get(s) == simdjson::SUCCESS && s == "Status") is_status = true;
    } else if (key == "reason") {
      if (value.get_string().get(s) == simdjson::SUCCESS) out.reason = std::string(s);
    } else if (key == "message") {
      if (value.get_string().get(s) == simdjson::SUCCESS) out.message = std::string(s);
    } else if (key == "code") {
      int64_t code = 0;
      if (value.get_int64().get(code) == simdjson::SUCCESS) out.code = static_cast<int>(code);
    } else if (key == "details") {
      simdjson::ondemand::object details;
      if (value.get_object().get(details) != simdjson::SUCCESS) continue;
      for (auto dfield : details) {
        std::string_view dkey;
        if (dfield.unescaped_key().get(dkey) != simdjson::SUCCESS || dkey != "causes") continue;
        simdjson::ondemand::array causes;
        if (dfield.value().get_array().get(causes) != simdjson::SUCCESS) continue;
        for (auto c : causes) {
          simdjson::ondemand::object cobj;
          if (c.get_object().get(cobj) != simdjson::SUCCESS) continue;
          std::string cause_reason;
          for (auto cfield : cobj) {
            std::string_view ckey, cval;
            if (cfield.unescaped_key().get(ckey) == simdjson::SUCCESS && ckey == "reason" &&
                cfield.value().get_string().get(cval) == simdjson::SUCCESS) {
              cause_reason = std::string(cval);
            }
          }
          out.causes.push_back(std::move(cause_reason));
        }
      }
    }
  }
  if (!is_status) return std::nullopt;
  return out;
}

Error DecodeApiError(int code, std::string_view body) {
  if (auto status = DecodeStatus(body)) {
    Error e = std::move(*status);
    if (e.code == 0) e.code = code;
    if (e.reason.empty()) e.reason = std::string(ReasonForCode(e.code));
    return e;
  }
  Error e{code, std::string(ReasonForCode(code)), std::string(DefaultMessage(code)), {}};
  if (!body.empty()) {
    // Keep the start of whatever the server (or a proxy) said; it is often the only clue.
    constexpr std::size_t kMaxBody = 1024;
    e.message += " (" + std::string(body.substr(0, kMaxBody)) + ")";
  }
  return e;
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
bool IsResourceExpired(const Error& e) {
  return Matches(e, reason::kExpired, 410);
}
bool IsGone(const Error& e) {
  return Matches(e, reason::kGone, 0);
}

bool IsTooLargeResourceVersion(const Error& e) {
  return Matches(e, reason::kTimeout, 504) && HasCause(e, cause::kResourceVersionTooLarge);
}

bool IsNamespaceTerminating(const Error& e) {
  return HasCause(e, cause::kNamespaceTerminating);
}

}  // namespace kcm::client
