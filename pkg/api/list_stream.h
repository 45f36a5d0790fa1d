// ListStreamDecoder: decodes a LIST answer while it arrives, chunk by chunk, emitting each item
// as soon as its bytes are complete, so that a big list never exists as one body (nor as one
// simdjson index of it): what is held besides the decoded items is the current item's bytes (and,
// for JSON, the small top-level part around "items"). The items and the list metadata are the
// same as decode_list / decode_list_protobuf give for the whole body.
//
// JSON: the top-level object's bytes are kept except the elements of its "items" array, each of
// which is cut out (nesting and strings tracked, as JsonFrameScanner does for watch frames) and
// given to Codec::decode_list_item; at the end the kept part — `{"kind":..,"metadata":{..},
// "items":[]}` — goes to Codec::decode_list for the metadata and a syntax check.
// Protobuf: the "k8s\0" magic, then runtime.Unknown {typeMeta = 1, raw = 2, contentEncoding = 3,
// contentType = 4} whose raw is the List message {metadata = 1 (ListMeta), items = 2 (repeated)};
// each item is a length-delimited field, cut out once its bytes are there and given to
// Codec::decode_list_item_protobuf. Fields are read in whatever order they come.
// A codec without the per-item decoder for an encoding fails the decode (DecodeError) at once:
// nothing is buffered whole.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include "pkg/api/codec.h"
#include "pkg/api/decoder.h"
#include "pkg/api/watch_event.h"
#include "pkg/util/result.h"

namespace kcm::api {

enum class ListEncoding { kJson, kProtobuf };

// Called with each item as soon as it is decoded; what it returns is what the list keeps (a cache
// may hand back an equal object it already holds, so that a relist does not hold two copies of
// the unchanged items), nothing if it returns null (it took the item: an initial list queued as
// it arrives). Called once with null when the decoder is made, before any item: a new answer
// begins, and items an earlier decoder handed out (an earlier attempt of a retried request) are
// not part of it.
using ListItemFunc = std::function<ObjectPtr(ObjectPtr)>;

class ListStreamDecoder {
 public:
  // max_item_bytes: an item (or another field held whole) longer than this fails the decode with
  // cause too-large rather than being buffered; 0 = unlimited. interner: the table the items'
  // labels and owner references are interned through (shared with the lister-watcher's watch
  // decoder); nullptr = a table of its own.
  ListStreamDecoder(const Codec& codec, ListEncoding encoding, size_t max_item_bytes = 0,
                    ListItemFunc on_item = {}, std::shared_ptr<InternTable> interner = nullptr);
  ~ListStreamDecoder();
  ListStreamDecoder(ListStreamDecoder&&) noexcept;
  ListStreamDecoder& operator=(ListStreamDecoder&&) noexcept;

  // The next bytes of the body. An error (a malformed item: reason DecodeError with the item's
  // path, e.g. "items[3].metadata.name: ..."; an item over the limit: cause too-large) is final:
  // later calls return it again.
  Status Feed(std::string_view chunk);
  // The body ended: the items and the list's metadata, or an error if the body was cut short,
  // malformed, or not a list of this codec's kind.
  Result<ObjectList> Finish();

  // Bytes held now other than the decoded items, and the most ever held (tests check they stay
  // bounded by one item, not the body).
  size_t buffered_bytes() const;
  size_t peak_buffered_bytes() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kcm::api
