// What the per-encoding list decoders behind ListStreamDecoder share (list_stream_json.cc,
// list_stream_protobuf.cc): the Impl interface, the too-large error and buffer recycling.
// Internal to pkg/api. Thread-compatible.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/decoder.h"
#include "pkg/api/list_stream.h"
#include "pkg/util/result.h"

namespace kcm::api {

class ListStreamDecoder::Impl {
 public:
  virtual ~Impl() = default;
  ListItemFunc on_item;
  // Every item is decoded through it, so the list's items intern into one table.
  std::optional<Decoder> decoder;
  // Items decoded so far (the index of the next one, for error paths): on_item may keep some.
  size_t decoded = 0;
  // Passes obj through on_item and keeps what comes back, unless that is null (taken).
  void Keep(ObjectPtr obj, std::vector<ObjectPtr>& out) {
    ++decoded;
    if (on_item) obj = on_item(std::move(obj));
    if (obj) out.push_back(std::move(obj));
  }
  virtual Status Feed(std::string_view chunk) = 0;
  virtual Result<ObjectList> Finish() = 0;
  virtual size_t buffered() const = 0;
  size_t peak() const { return peak_; }

 protected:
  void NotePeak() { peak_ = std::max(peak_, buffered()); }

 private:
  size_t peak_ = 0;
};

namespace internal {

inline Error ListTooLarge(size_t limit, std::string_view what = "list item") {
  return Error::Transport(TransportCause::kTooLarge,
                          std::string(what) + " over the " + std::to_string(limit) + "-byte limit");
}

// After a big item, do not keep its capacity for the rest of the list.
inline constexpr size_t kKeepListBufferCapacity = size_t{1} << 20;

inline void RecycleListBuffer(std::string* buf) {
  buf->clear();
  if (buf->capacity() > kKeepListBufferCapacity) std::string().swap(*buf);
}

// The decoder of each encoding (see list_stream.h); max_item 0 = unlimited.
std::unique_ptr<ListStreamDecoder::Impl> NewJsonListDecoder(const Codec& codec, size_t max_item);
std::unique_ptr<ListStreamDecoder::Impl> NewProtobufListDecoder(const Codec& codec,
                                                                size_t max_item);

}  // namespace internal
}  // namespace kcm::api
