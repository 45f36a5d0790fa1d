#include "pkg/api/generic_object.h"

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"

namespace kcm::api {
namespace internal {
namespace {

Status DecodeGenericFields(DecoderImpl& d, od::value v, int, GenericObject* obj) {
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "kind")) return ReadStringAt(f.value(), "kind", &obj->kind);
    if (KeyIs(f, "metadata"))
      return DecodeObjectMeta(d, f.value(), &obj->metadata, MetaMode::kFull, nullptr);
    return OkStatus();
  });
  if (!s.ok()) return s;
  if (obj->kind.empty()) obj->kind = d.generic_kind;
  return RequireName(obj->metadata);
}

constexpr FromValueFn kGenericFromValue = &FromValueKeepingRaw<GenericObject, &DecodeGenericFields>;

}  // namespace
}  // namespace internal

const Codec& GenericCodec() {
  static const Codec codec = internal::JsonCodec<internal::kGenericFromValue>("");
  return codec;
}

}  // namespace kcm::api
