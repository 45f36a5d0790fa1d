// The protobuf list decoder behind ListStreamDecoder (see list_stream.h).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/internal/decode_error.h"
#include "pkg/api/internal/list_stream_impl.h"
#include "pkg/api/json_input.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/protobuf/wire.h"

namespace kcm::api {
namespace {

using internal::DecodeErrorAt;
using internal::ListItemPath;
using internal::PrefixErrorPath;
using internal::RecycleListBuffer;

// Protobuf: a small state machine over (envelope fields | the raw List message's fields). A field
// that must be read whole (an item, the ListMeta, the envelope's small fields) is decoded straight
// from the chunk when it lies inside one, else from pending_, which then holds at most that one
// field; any other field is skipped as its bytes pass.
class ProtobufList final : public ListStreamDecoder::Impl {
 public:
  ProtobufList(const Codec& codec, size_t max_item) : codec_(codec), max_item_(max_item) {}

  Status Feed(std::string_view chunk) override {
    if (error_) return *error_;
    while (!chunk.empty()) {
      if (pending_.empty()) {
        size_t used = 0;
        if (Status s = Process(chunk, &used); !s.ok()) return Fail(s.error());
        chunk.remove_prefix(used);
        if (!chunk.empty()) {
          // An incomplete field: keep just the bytes that belong to it.
          const size_t take = need_ > 0 ? std::min(need_, chunk.size()) : chunk.size();
          pending_.assign(chunk.substr(0, take));
          chunk.remove_prefix(take);
        }
      } else {
        // Complete the pending field (or, while its header is incomplete, a few more bytes).
        const size_t want = need_ > pending_.size() ? need_ - pending_.size() : kHeaderProbe;
        const size_t take = std::min(want, chunk.size());
        pending_.append(chunk.substr(0, take));
        chunk.remove_prefix(take);
        size_t used = 0;
        if (Status s = Process(pending_, &used); !s.ok()) return Fail(s.error());
        pending_.erase(0, used);
        if (pending_.empty()) RecycleListBuffer(&pending_);
      }
      NotePeak();
    }
    return OkStatus();
  }

  Result<ObjectList> Finish() override {
    if (error_) return *error_;
    if (stage_ == Stage::kMagic) {
      return DecodeErrorAt("", "missing the k8s protobuf envelope");
    }
    if (!pending_.empty() || skip_left_ > 0 || (in_raw_ && raw_left_ > 0)) {
      return DecodeErrorAt(in_raw_ ? ListItemPath(decoded) : "", "truncated list body");
    }
    if (!saw_raw_) return DecodeErrorAt("", "the envelope has no object");
    if (Status s = CheckKind(); !s.ok()) return s.error();
    if (!encoding_.empty()) {
      return DecodeErrorAt("", "unsupported contentEncoding \"" + encoding_ + "\"");
    }
    if (!content_type_.empty() && content_type_ != kContentTypeProtobuf) {
      return DecodeErrorAt("", "unsupported contentType \"" + content_type_ + "\"");
    }
    return std::move(list_);
  }

  size_t buffered() const override { return pending_.size(); }

 private:
  enum class Stage { kMagic, kFields };
  // Longer than any field header: tag (≤ 5 bytes) + a varint (≤ 10).
  static constexpr size_t kHeaderProbe = 16;

  Status Fail(Error e) {
    error_ = std::move(e);
    std::string().swap(pending_);
    return *error_;
  }

  Status CheckKind() const {
    const std::string want = std::string(codec_.kind) + "List";
    if (kind_.empty() || codec_.kind.empty() || kind_ == want) return OkStatus();
    return DecodeErrorAt("", "unexpected kind \"" + kind_ + "\", want \"" + want + "\"");
  }

  // Reads one varint at data[*pos]; false when data ends first (*pos unchanged), an error for a
  // malformed one.
  static Result<bool> Varint(std::string_view data, size_t* pos, uint64_t* out) {
    uint64_t v = 0;
    size_t p = *pos;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == data.size()) return false;
      const uint8_t b = static_cast<uint8_t>(data[p++]);
      if (shift == 63 && b > 1) return DecodeErrorAt("", "varint overflows 64 bits");
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        *out = v;
        *pos = p;
        return true;
      }
    }
    return DecodeErrorAt("", "varint overflows 64 bits");
  }

  // Consumes whole fields of `data` from the start; *used = bytes consumed. need_ = the bytes the
  // next, incomplete field needs in all (0 while its header is incomplete).
  Status Process(std::string_view data, size_t* used) {
    size_t pos = 0;
    need_ = 0;
    while (true) {
      if (stage_ == Stage::kMagic) {
        if (data.size() - pos < kProtobufMagic.size()) break;
        if (!HasProtobufMagic(data.substr(pos))) {
          return DecodeErrorAt("", "missing the k8s protobuf envelope");
        }
        pos += kProtobufMagic.size();
        stage_ = Stage::kFields;
        continue;
      }
      if (skip_left_ > 0) {
        const size_t take = static_cast<size_t>(std::min<uint64_t>(skip_left_, data.size() - pos));
        pos += take;
        skip_left_ -= take;
        if (in_raw_) raw_left_ -= take;
        if (skip_left_ > 0) break;
        continue;
      }
      if (in_raw_ && raw_left_ == 0) in_raw_ = false;  // the List message is complete
      if (pos == data.size()) break;

      size_t p = pos;
      uint64_t tag = 0;
      auto got = Varint(data, &p, &tag);
      if (!got.ok()) return got.error();
      if (!*got) break;
      const uint64_t number = tag >> 3;
      if (number == 0 || number > (uint64_t{1} << 29) - 1) {
        return DecodeErrorAt("", "invalid field number");
      }
      const auto type = static_cast<protobuf::WireType>(tag & 7);
      uint64_t len = 0;
      switch (type) {
        case protobuf::WireType::kVarint: {
          uint64_t v = 0;
          got = Varint(data, &p, &v);
          if (!got.ok()) return got.error();
          if (!*got) break;
          len = 0;
          break;
        }
        case protobuf::WireType::kFixed64:
        case protobuf::WireType::kFixed32: {
          const size_t w = type == protobuf::WireType::kFixed64 ? 8 : 4;
          if (data.size() - p < w) {
            got = false;
            break;
          }
          p += w;
          break;
        }
        case protobuf::WireType::kLengthDelimited:
          got = Varint(data, &p, &len);
          if (!got.ok()) return got.error();
          break;
        default:
          return DecodeErrorAt("", "unsupported wire type");
      }
      if (!*got) break;  // the header is incomplete
      const size_t header = p - pos;
      if (in_raw_ && header + len > raw_left_) {
        return DecodeErrorAt(ListItemPath(decoded), "length past the end of input");
      }
      if (type != protobuf::WireType::kLengthDelimited) {
        pos = p;
        if (in_raw_) raw_left_ -= header;
        continue;
      }
      const auto field = static_cast<uint32_t>(number);
      if (!in_raw_ && field == 2) {
        // runtime.Unknown.raw: the List message, read field by field.
        if (saw_raw_) return DecodeErrorAt("", "the envelope has two objects");
        if (Status s = CheckKind(); !s.ok()) return s;
        saw_raw_ = true;
        in_raw_ = true;
        raw_left_ = len;
        pos = p;
        continue;
      }
      const bool wanted =
          in_raw_ ? (field == 1 || field == 2) : (field == 1 || field == 3 || field == 4);
      if (!wanted) {
        pos = p;
        if (in_raw_) raw_left_ -= header;
        skip_left_ = len;
        continue;
      }
      if (max_item_ > 0 && len > max_item_) return internal::ListTooLarge(max_item_);
      if (data.size() - p < len) {
        need_ = header + static_cast<size_t>(len);
        break;
      }
      const std::string_view value = data.substr(p, static_cast<size_t>(len));
      Status s = in_raw_ ? ListField(field, value) : EnvelopeField(field, value);
      if (!s.ok()) return s;
      pos = p + static_cast<size_t>(len);
      if (in_raw_) raw_left_ -= header + len;
    }
    *used = pos;
    return OkStatus();
  }

  // runtime.Unknown {typeMeta = 1 {kind = 2}, contentEncoding = 3, contentType = 4}.
  Status EnvelopeField(uint32_t field, std::string_view value) {
    if (field == 3) {
      encoding_.assign(value);
      return OkStatus();
    }
    if (field == 4) {
      content_type_.assign(value);
      return OkStatus();
    }
    protobuf::WireReader reader(value);
    protobuf::WireField f;
    while (reader.Next(&f)) {
      if (f.number == 2 && f.type == protobuf::WireType::kLengthDelimited) kind_.assign(f.bytes);
    }
    if (reader.error() != nullptr) return DecodeErrorAt("", reader.error());
    return OkStatus();
  }

  // The List message: {metadata = 1 (ListMeta {resourceVersion = 2, continue = 3,
  // remainingItemCount = 4, shardInfo = 5}), items = 2}.
  Status ListField(uint32_t field, std::string_view value) {
    if (field == 2) {
      auto obj = codec_.decode_list_item_protobuf(*decoder, value);
      if (!obj.ok()) return PrefixErrorPath(obj.error(), ListItemPath(decoded));
      Keep(std::move(obj).value(), list_.items);
      return OkStatus();
    }
    protobuf::WireReader reader(value);
    protobuf::WireField f;
    while (reader.Next(&f)) {
      const bool bytes = f.type == protobuf::WireType::kLengthDelimited;
      switch (f.number) {
        case 2:
          if (!bytes) return DecodeErrorAt("metadata.resourceVersion", "wrong wire type");
          list_.resource_version.assign(f.bytes);
          break;
        case 3:
          if (!bytes) return DecodeErrorAt("metadata.continue", "wrong wire type");
          list_.continue_token.assign(f.bytes);
          break;
        case 4:
          if (f.type != protobuf::WireType::kVarint) {
            return DecodeErrorAt("metadata.remainingItemCount", "wrong wire type");
          }
          list_.remaining_item_count = static_cast<int64_t>(f.varint);
          break;
        case 5: {  // shardInfo {selector = 1}
          if (!bytes) return DecodeErrorAt("metadata.shardInfo", "wrong wire type");
          protobuf::WireReader info(f.bytes);
          protobuf::WireField sf;
          while (info.Next(&sf)) {
            if (sf.number != 1) continue;
            if (sf.type != protobuf::WireType::kLengthDelimited) {
              return DecodeErrorAt("metadata.shardInfo.selector", "wrong wire type");
            }
            list_.shard_selector.assign(sf.bytes);
          }
          if (info.error() != nullptr) return DecodeErrorAt("metadata.shardInfo", info.error());
          break;
        }
        default:
          break;
      }
    }
    if (reader.error() != nullptr) return DecodeErrorAt("metadata", reader.error());
    return OkStatus();
  }

  const Codec& codec_;
  const size_t max_item_;
  std::optional<Error> error_;
  ObjectList list_;

  Stage stage_ = Stage::kMagic;
  std::string pending_;
  size_t need_ = 0;
  uint64_t skip_left_ = 0;
  bool in_raw_ = false;
  bool saw_raw_ = false;
  uint64_t raw_left_ = 0;
  std::string kind_;
  std::string encoding_;
  std::string content_type_;
};

}  // namespace

std::unique_ptr<ListStreamDecoder::Impl> internal::NewProtobufListDecoder(const Codec& codec,
                                                                          size_t max_item) {
  return std::make_unique<ProtobufList>(codec, max_item);
}

}  // namespace kcm::api
