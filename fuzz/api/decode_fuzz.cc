// libFuzzer target for the pkg/api decoders: every codec's object, list and watch decoder (JSON,
// and protobuf where the codec has one), the streaming list decoder (list_stream.h) in both
// encodings fed in chunks whose size the input's first byte picks, the protobuf Pod and Status
// decoders, the JSON Status
// decoder and the JSON value parser must return a value or a DecodeError — never crash, leak or
// hit UB (run under ASan/UBSan).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pkg/api/codec.h"
#include "pkg/api/json.h"
#include "pkg/api/list_stream.h"
#include "pkg/api/protobuf.h"
#include "pkg/api/status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  kcm::api::Decoder decoder;
  for (const kcm::api::Codec* codec :
       {&kcm::api::PodCodec(), &kcm::api::ReplicaSetCodec(), &kcm::api::DeploymentCodec(),
        &kcm::api::LeaseCodec(), &kcm::api::EventCodec(), &kcm::api::GenericCodec()}) {
    (void)codec->decode(decoder, in);
    (void)codec->decode_list(decoder, in);
    (void)codec->decode_watch_event(decoder, in);
    if (codec->decode_list_protobuf != nullptr) (void)codec->decode_list_protobuf(decoder, in);
    if (codec->decode_watch_event_protobuf != nullptr)
      (void)codec->decode_watch_event_protobuf(decoder, in);
    const size_t chunk = in.empty() ? 1 : 1 + static_cast<uint8_t>(in[0]) % 64;
    for (auto encoding : {kcm::api::ListEncoding::kJson, kcm::api::ListEncoding::kProtobuf}) {
      kcm::api::ListStreamDecoder stream(*codec, encoding, /*max_item_bytes=*/4096);
      bool failed = false;
      for (size_t i = 0; i < in.size() && !failed; i += chunk) {
        failed = !stream.Feed(in.substr(i, chunk)).ok();
      }
      if (!failed) (void)stream.Finish();
    }
  }
  (void)kcm::api::DecodePodProtobuf(decoder, in);
  (void)kcm::api::DecodeStatusProtobuf(in);
  (void)kcm::api::DecodeStatus(in);
  auto v = kcm::api::json::Parse(in);
  if (v.ok()) {
    // Serialization must round-trip through the parser to the same canonical form.
    auto again = kcm::api::json::Parse(kcm::api::json::Serialize(*v));
    if (!again.ok() ||
        kcm::api::json::CanonicalString(*again) != kcm::api::json::CanonicalString(*v)) {
      __builtin_trap();
    }
  }
  return 0;
}
