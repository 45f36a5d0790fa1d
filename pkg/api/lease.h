// Lease (coordination.k8s.io/v1): the lock object of leader election. Decoded with its raw JSON;
// ToJson writes the spec back onto it so unknown fields survive. Plain data; thread-compatible.
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

struct LeaseSpec {
  std::optional<std::string> holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<Time> acquire_time;  // MicroTime on the wire
  std::optional<Time> renew_time;    // MicroTime on the wire
  std::optional<int32_t> lease_transitions;
};

struct Lease final : Object {
  ObjectMeta metadata;
  LeaseSpec spec;
  std::string raw_json;  // "" for a Lease built locally

  std::string_view Kind() const override { return "Lease"; }
  const ObjectMeta& Meta() const override { return metadata; }

  // The body for create/update: raw_json (if any) with metadata.name/namespace/resourceVersion,
  // metadata.annotations and the whole spec replaced from the fields above.
  Result<std::string> ToJson() const;
};

Result<std::shared_ptr<const Lease>> DecodeLease(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
