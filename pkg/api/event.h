// Event (core/v1): what the event recorder writes (and may read back for correlation). Plain
// data; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct ObjectReference {
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string api_version;
  std::string resource_version;
  std::string field_path;
};

struct EventSource {
  std::string component;
  std::string host;
};

struct Event final : Object {
  ObjectMeta metadata;
  std::string generate_name;  // metadata.generateName (ObjectMeta does not model it)
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  EventSource source;
  std::optional<Time> first_timestamp;
  std::optional<Time> last_timestamp;
  int32_t count = 0;
  std::string type;                // "Normal" or "Warning"
  std::optional<Time> event_time;  // MicroTime
  std::string reporting_component;
  std::string reporting_instance;
  std::string action;

  std::string_view Kind() const override { return "Event"; }
  const ObjectMeta& Meta() const override { return metadata; }

  // The create/update body (apiVersion v1, kind Event).
  std::string ToJson() const;
};

Result<std::shared_ptr<const Event>> DecodeEvent(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
