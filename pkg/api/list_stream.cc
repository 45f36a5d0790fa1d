#include "pkg/api/list_stream.h"

#include <memory>
#include <string>
#include <utility>

#include "pkg/api/internal/decode_error.h"
#include "pkg/api/internal/list_stream_impl.h"

namespace kcm::api {
namespace {

using internal::DecodeErrorAt;

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

}  // namespace

ListStreamDecoder::ListStreamDecoder(const Codec& codec, ListEncoding encoding,
                                     size_t max_item_bytes, ListItemFunc on_item,
                                     std::shared_ptr<InternTable> interner) {
  if (encoding == ListEncoding::kProtobuf && codec.decode_list_item_protobuf != nullptr) {
    impl_ = internal::NewProtobufListDecoder(codec, max_item_bytes);
  } else if (encoding == ListEncoding::kJson && codec.decode_list_item != nullptr) {
    impl_ = internal::NewJsonListDecoder(codec, max_item_bytes);
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
