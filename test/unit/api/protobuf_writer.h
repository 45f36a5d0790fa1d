// Test helper: the few protobuf wire-format writers the decoder tests and benchmarks need to
// build frames and lists the server rarely sends (bookmarks, errors, unknown fields). Test-only;
// the product only reads protobuf (pkg/api/protobuf/wire.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/api/protobuf.h"

namespace kcm::api::testing {

inline std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// A length-delimited field (wire type 2).
inline std::string Bytes(uint32_t field, std::string_view payload) {
  return Varint((uint64_t{field} << 3) | 2) + Varint(payload.size()) + std::string(payload);
}

// A varint field (wire type 0).
inline std::string VarintField(uint32_t field, uint64_t v) {
  return Varint(uint64_t{field} << 3) + Varint(v);
}

// The "k8s\0" magic and runtime.Unknown {typeMeta {apiVersion v1, kind}, raw}.
inline std::string Envelope(std::string_view kind, std::string_view raw) {
  return std::string(kProtobufMagic) + Bytes(1, Bytes(1, "v1") + Bytes(2, kind)) + Bytes(2, raw);
}

}  // namespace kcm::api::testing
