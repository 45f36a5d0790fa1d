// Codec: the decoders of one kind, chosen by the reflector/informer for its resource. Each
// function decodes an object, a LIST page or a WATCH frame (behaviour 1.7, 1.8, 2.5, 2.7) using the
// caller's Decoder (one per thread). Codecs are immutable singletons; thread-safe to share.
#pragma once

#include <string_view>

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object.h"
#include "pkg/api/watch_event.h"
#include "pkg/util/result.h"

namespace kcm::api {

class TextPacker;

// The annotation that ends the initial events of a streaming list (behaviour 2.7).
inline constexpr std::string_view kInitialEventsEndAnnotation = "k8s.io/initial-events-end";

struct Codec {
  std::string_view kind;
  Result<ObjectPtr> (*decode)(Decoder&, JsonInput);
  Result<ObjectList> (*decode_list)(Decoder&, JsonInput);
  // ADDED/MODIFIED/DELETED carry the decoded object and its resourceVersion; BOOKMARK carries
  // only resource_version and initial_events_end (object is null); ERROR carries the Status as
  // `error` (object null). Failures are "DecodeError" naming the field path.
  Result<WatchEvent> (*decode_watch_event)(Decoder&, JsonInput);
  // Protobuf reads (pkg/api/protobuf.h): a LIST body and a watch frame without its length
  // prefix, same results as the JSON decoders. nullptr for kinds read as JSON only.
  Result<ObjectList> (*decode_list_protobuf)(Decoder&, std::string_view) = nullptr;
  Result<WatchEvent> (*decode_watch_event_protobuf)(Decoder&, std::string_view) = nullptr;
  // Streaming LIST (list_stream.h): one element of a JSON list's "items" array (`list_kind` is
  // the list's "kind", e.g. "PodList", for kinds that take their own kind from it), and one item
  // of a protobuf list (the item's message, without an envelope). nullptr: a streamed list in that
  // encoding is refused (never buffered whole); every codec has the JSON one.
  Result<ObjectPtr> (*decode_list_item)(Decoder&, JsonInput, std::string_view list_kind) = nullptr;
  Result<ObjectPtr> (*decode_list_item_protobuf)(Decoder&, std::string_view) = nullptr;
  // For kinds that keep their raw JSON as a SharedText (ReplicaSet, Deployment): a copy of a
  // decoded object of this kind whose kept text `packer` holds deflated, or null when there is
  // nothing to pack (already packed, too small, not this kind, or the text became the packer's
  // dictionary). An informer packs its watched objects this way once they stay unchanged
  // (SharedIndexInformerOptions::compact); nullptr for other kinds.
  ObjectPtr (*pack_kept_text)(const Object&, TextPacker&) = nullptr;
  // Whether an object of this kind holds its kept text plain (what pack_kept_text may pack).
  bool (*kept_text_plain)(const Object&) = nullptr;
};

const Codec& PodCodec();
const Codec& ReplicaSetCodec();
const Codec& DeploymentCodec();
const Codec& LeaseCodec();
const Codec& EventCodec();
const Codec& GenericCodec();

}  // namespace kcm::api
