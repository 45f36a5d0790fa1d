#include "pkg/api/list_stream.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/api/decoder.h"
#include "pkg/api/internal/decode_error.h"
#include "pkg/api/json_input.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/protobuf/wire.h"

namespace kcm::api {
namespace {

using internal::DecodeErrorAt;
using internal::ListItemPath;
using internal::PrefixErrorPath;

Error TooLarge(size_t limit, std::string_view what = "list item") {
  return Error::Transport(TransportCause::kTooLarge,
                          std::string(what) + " over the " + std::to_string(limit) + "-byte limit");
}

// After a big item, do not keep its capacity for the rest of the list.
constexpr size_t kKeepCapacity = size_t{1} << 20;

void Recycle(std::string* buf) {
  buf->clear();
  if (buf->capacity() > kKeepCapacity) std::string().swap(*buf);
}

}  // namespace

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

namespace {

// A codec without the per-item decoder for the answer's encoding: the list is refused at its first
// byte rather than buffered whole (a body of unbounded size). Every codec has the JSON one; only
// codecs with a protobuf item decoder are asked for protobuf (ResourceListerWatcher), so this is a
// server answering in an encoding it was not asked for.
class UnsupportedList final : public ListStreamDecoder::Impl {
 public:
  UnsupportedList(const Codec& codec, ListEncoding encoding)
      : error_(DecodeErrorAt("", std::string("no per-item ") +
                                     (encoding == ListEncoding::kProtobuf ? "protobuf" : "JSON") +
                                     " decoder for kind \"" + std::string(codec.kind) + "\"")) {}

  Status Feed(std::string_view) override { return error_; }
  Result<ObjectList> Finish() override { return error_; }
  size_t buffered() const override { return 0; }

 private:
  Error error_;
};

// JSON: see the header. Outside the items' elements every byte is kept in skeleton_ (except the
// commas between elements), so the kept text is the list with "items":[]; strings directly inside
// the top-level object are captured (up to a few bytes) to recognise the "items" key and the
// list's "kind".
class JsonList final : public ListStreamDecoder::Impl {
 public:
  JsonList(const Codec& codec, size_t max_item) : codec_(codec), max_item_(max_item) {}

  Status Feed(std::string_view data) override {
    if (error_) return *error_;
    size_t i = 0;
    const size_t n = data.size();
    while (i < n) {
      if (in_element_) {
        i = ScanElement(data, i);
        if (error_) return *error_;
        continue;
      }
      if (Status s = Outside(data[i]); !s.ok()) {
        error_ = s.error();
        return *error_;
      }
      // What lies outside the items (kind, apiVersion, metadata) is small in any real answer;
      // a server that sends a huge field there is bounded like one item.
      if (max_item_ > 0 && skeleton_.size() > max_item_) {
        error_ = TooLarge(max_item_, "list body outside its items");
        return *error_;
      }
      if (in_element_) {
        // Outside() saw the '{' that opens an element; ScanElement takes it from here.
        run_ = i;
        continue;
      }
      ++i;
    }
    if (in_element_) {
      const size_t tail = n - run_;
      if (max_item_ > 0 && item_.size() + tail > max_item_) {
        error_ = TooLarge(max_item_);
        std::string().swap(item_);
        return *error_;
      }
      item_.append(data.substr(run_));
      run_ = 0;
    }
    NotePeak();
    return OkStatus();
  }

  Result<ObjectList> Finish() override {
    if (error_) return *error_;
    if (in_element_ || in_string_ || depth_ != 0) {
      return DecodeErrorAt(in_element_ ? ListItemPath(decoded) : "", "truncated list body");
    }
    skeleton_.reserve(skeleton_.size() + kJsonPadding);
    auto list = codec_.decode_list(*decoder, JsonInput::Padded(skeleton_));
    if (!list.ok()) return list.error();
    // The items the skeleton still holds (an "items" key we did not recognise, e.g. written with
    // escapes) were decoded by decode_list; ours come first.
    for (ObjectPtr& item : list->items) Keep(std::move(item), items_);
    list->items = std::move(items_);
    return list;
  }

  size_t buffered() const override { return item_.size() + skeleton_.size(); }

 private:
  enum class Elem { kFirst, kNext, kAfter };
  static constexpr size_t kMaxCapture = 32;

  static bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

  // One byte outside the items' elements.
  Status Outside(char c) {
    if (in_string_) {
      skeleton_.push_back(c);
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
        capture_ok_ = false;  // an escaped key or kind is left to the skeleton's decoder
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 1) EndTopLevelString();
      } else if (depth_ == 1 && capture_ok_) {
        if (capture_.size() < kMaxCapture) {
          capture_.push_back(c);
        } else {
          capture_ok_ = false;
        }
      }
      return OkStatus();
    }
    if (in_items_ && depth_ == 2) {
      // Directly inside the items array: elements and the commas between them.
      if (IsSpace(c)) return OkStatus();
      if (c == ']' && elem_ != Elem::kNext) {
        in_items_ = false;
        depth_ = 1;
        skeleton_.push_back(c);
        return OkStatus();
      }
      if (c == ',' && elem_ == Elem::kAfter) {
        elem_ = Elem::kNext;
        return OkStatus();
      }
      if (c == '{' && elem_ != Elem::kAfter) {
        in_element_ = true;
        elem_depth_ = 0;
        elem_in_string_ = false;
        elem_escaped_ = false;
        return OkStatus();
      }
      return DecodeErrorAt(ListItemPath(decoded),
                           std::string("unexpected character '") + c + "' in the items array");
    }
    skeleton_.push_back(c);
    switch (c) {
      case '"':
        in_string_ = true;
        if (depth_ == 1) {
          capture_.clear();
          capture_ok_ = true;
        }
        break;
      case '[':
        if (depth_ == 1 && after_colon_ && key_ok_ && key_ == "items") {
          in_items_ = true;
          elem_ = Elem::kFirst;
        }
        ++depth_;
        break;
      case '{':
        ++depth_;
        break;
      case '}':
      case ']':
        // An unbalanced close is left for the skeleton's decoder to reject.
        if (depth_ > 0) --depth_;
        break;
      case ':':
        if (depth_ == 1) after_colon_ = true;
        break;
      case ',':
        if (depth_ == 1) after_colon_ = false;
        break;
      default:
        break;
    }
    return OkStatus();
  }

  void EndTopLevelString() {
    if (!after_colon_) {
      key_ = capture_;
      key_ok_ = capture_ok_;
    } else if (key_ok_ && key_ == "kind" && capture_ok_) {
      kind_ = capture_;
    }
  }

  // Walks the current element from data[i]; returns where it stopped (data.size() or just past
  // the element's closing brace, once the element is decoded).
  size_t ScanElement(std::string_view data, size_t i) {
    const size_t n = data.size();
    int depth = elem_depth_;
    bool in_string = elem_in_string_;
    bool escaped = elem_escaped_;
    for (; i < n; ++i) {
      const char c = data[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          CompleteElement(data.substr(run_, i + 1 - run_));
          return i + 1;
        }
      }
    }
    elem_depth_ = depth;
    elem_in_string_ = in_string;
    elem_escaped_ = escaped;
    return n;
  }

  void CompleteElement(std::string_view tail) {
    in_element_ = false;
    elem_ = Elem::kAfter;
    if (max_item_ > 0 && item_.size() + tail.size() > max_item_) {
      error_ = TooLarge(max_item_);
      std::string().swap(item_);
      return;
    }
    item_.append(tail);
    if (item_.capacity() < item_.size() + kJsonPadding) item_.reserve(item_.size() + kJsonPadding);
    NotePeak();
    auto obj = codec_.decode_list_item(*decoder, JsonInput::Padded(item_), kind_);
    Recycle(&item_);
    if (!obj.ok()) {
      error_ = PrefixErrorPath(obj.error(), ListItemPath(decoded));
      return;
    }
    Keep(std::move(obj).value(), items_);
  }

  const Codec& codec_;
  const size_t max_item_;
  std::vector<ObjectPtr> items_;
  std::optional<Error> error_;

  std::string skeleton_;
  int depth_ = 0;
  bool in_string_ = false;
  bool escaped_ = false;
  // Directly inside the top-level object: the last key, whether its value is being read, the
  // string being captured and the list's kind.
  std::string key_;
  bool key_ok_ = false;
  bool after_colon_ = false;
  std::string capture_;
  bool capture_ok_ = false;
  std::string kind_;

  bool in_items_ = false;
  Elem elem_ = Elem::kFirst;
  bool in_element_ = false;
  size_t run_ = 0;  // where the current element's bytes start in the chunk being fed
  std::string item_;
  int elem_depth_ = 0;
  bool elem_in_string_ = false;
  bool elem_escaped_ = false;
};

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
        if (pending_.empty()) Recycle(&pending_);
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
      if (max_item_ > 0 && len > max_item_) return TooLarge(max_item_);
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
  // remainingItemCount = 4}), items = 2}.
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

ListStreamDecoder::ListStreamDecoder(const Codec& codec, ListEncoding encoding,
                                     size_t max_item_bytes, ListItemFunc on_item,
                                     std::shared_ptr<InternTable> interner) {
  if (encoding == ListEncoding::kProtobuf && codec.decode_list_item_protobuf != nullptr) {
    impl_ = std::make_unique<ProtobufList>(codec, max_item_bytes);
  } else if (encoding == ListEncoding::kJson && codec.decode_list_item != nullptr) {
    impl_ = std::make_unique<JsonList>(codec, max_item_bytes);
  } else {
    impl_ = std::make_unique<UnsupportedList>(codec, encoding);
  }
  impl_->on_item = std::move(on_item);
  // A new answer begins: whatever an earlier decoder (an earlier attempt) handed out is void.
  if (impl_->on_item) impl_->on_item(nullptr);
  if (interner) {
    impl_->decoder.emplace(std::move(interner));
  } else {
    impl_->decoder.emplace();
  }
}

ListStreamDecoder::~ListStreamDecoder() = default;
ListStreamDecoder::ListStreamDecoder(ListStreamDecoder&&) noexcept = default;
ListStreamDecoder& ListStreamDecoder::operator=(ListStreamDecoder&&) noexcept = default;

Status ListStreamDecoder::Feed(std::string_view chunk) {
  return impl_->Feed(chunk);
}

Result<ObjectList> ListStreamDecoder::Finish() {
  return impl_->Finish();
}

size_t ListStreamDecoder::buffered_bytes() const {
  return impl_->buffered();
}

size_t ListStreamDecoder::peak_buffered_bytes() const {
  return impl_->peak();
}

}  // namespace kcm::api
