// Protobuf reads (application/vnd.kubernetes.protobuf): the API server's binary encoding of
// built-in kinds. A body is the 4-byte magic "k8s\0" followed by a runtime.Unknown message
// (typeMeta, raw, contentEncoding, contentType) whose `raw` is the object's own message; a watch
// frame (after its 4-byte length prefix) is a bare meta.v1.WatchEvent whose object.raw is such an
// enveloped body. The decoders fill the same pruned records as the JSON decoders and skip what
// those do not keep (labels and owner references interned through the Decoder's InternTable).
// Field numbers come from upstream's generated.proto files (public API). Thread-safe with one
// Decoder per thread.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "pkg/api/decoder.h"
#include "pkg/api/object.h"
#include "pkg/api/pod.h"
#include "pkg/api/watch_event.h"
#include "pkg/util/result.h"

namespace kcm::api {

inline constexpr std::string_view kContentTypeProtobuf = "application/vnd.kubernetes.protobuf";
inline constexpr std::string_view kProtobufMagic{"k8s\0", 4};

// True when `body` starts with the protobuf envelope's magic bytes.
inline bool HasProtobufMagic(std::string_view body) {
  return body.substr(0, kProtobufMagic.size()) == kProtobufMagic;
}

// An enveloped meta.v1.Status (an error answer to a protobuf Accept) → {code, reason, message,
// details.causes[].reason}, as DecodeStatus reads the JSON form. nullopt when `body` is not one.
std::optional<Error> DecodeStatusProtobuf(std::string_view body);

// One enveloped Pod (a GET answer). Errors: reason "DecodeError" naming the field path.
Result<std::shared_ptr<const Pod>> DecodePodProtobuf(Decoder& decoder, std::string_view body);
// One enveloped PodList (a LIST answer).
Result<ObjectList> DecodePodListProtobuf(Decoder& decoder, std::string_view body);
// One item of a PodList: a Pod message without an envelope (what the streaming list decoder,
// list_stream.h, cuts out of a list body).
Result<ObjectPtr> DecodePodListItemProtobuf(Decoder& decoder, std::string_view message);
// One watch frame without its length prefix (a bare WatchEvent; an enveloped one is accepted
// too). Same contract as Codec::decode_watch_event.
Result<WatchEvent> DecodePodWatchEventProtobuf(Decoder& decoder, std::string_view frame);

}  // namespace kcm::api
