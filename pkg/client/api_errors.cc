#include "pkg/client/api_errors.h"

#include <simdjson.h>

#include <string>

#include "pkg/api/protobuf.h"
#include "pkg/client/json_padding.h"

static_assert(kcm::client::kJsonPadding >= simdjson::SIMDJSON_PADDING,
              "kJsonPadding must cover simdjson's read-ahead");

namespace kcm::client {
namespace {

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
  // An error answer to a protobuf Accept is a protobuf Status (kube-apiserver negotiates error
  // bodies like any other).
  auto status = api::HasProtobufMagic(body) ? api::DecodeStatusProtobuf(body) : DecodeStatus(body);
  if (status) {
    Error e = std::move(*status);
    if (e.code == 0) e.code = code;
    if (e.reason.empty()) e.reason = std::string(errors::ReasonForCode(e.code));
    return e;
  }
  Error e{code, std::string(errors::ReasonForCode(code)), std::string(DefaultMessage(code)), {}};
  if (!body.empty()) {
    // Keep the start of whatever the server (or a proxy) said, it is often the only clue, but no
    // more than client-go's maxUnstructuredResponseTextBytes, cut where a character starts.
    std::string_view text = body;
    const bool cut = text.size() > kMaxErrorTextBytes;
    if (cut) {
      std::size_t end = kMaxErrorTextBytes;
      while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
      text = text.substr(0, end);
    }
    e.message += " (" + std::string(text) + (cut ? " [truncated])" : ")");
  }
  return e;
}

}  // namespace kcm::client
