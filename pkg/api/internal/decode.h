// Private to pkg/api .cc files: the decoder state and the shared pieces of the typed decoders
// (metadata, conditions, selector, template, list and watch framing). Includes simdjson.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/condition.h"
#include "pkg/api/decoder.h"
#include "pkg/api/intern_table.h"
#include "pkg/api/internal/ondemand.h"
#include "pkg/api/internal/strip_managed_fields.h"
#include "pkg/api/json_input.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/object.h"
#include "pkg/api/pod_template.h"
#include "pkg/api/shared_text.h"
#include "pkg/api/watch_event.h"

namespace kcm::api::internal {

// Nesting levels of independent parses: a frame (0) → its object's raw JSON (1) → that
// object's template (2) → spare.
inline constexpr int kLevels = 4;

struct DecoderImpl {
  std::array<od::parser, kLevels> parsers;
  std::string scratch;                    // padded copy of unpadded input
  std::string generic_kind;               // for GenericObject list items without their own kind
  std::shared_ptr<InternTable> interner;  // never null
  std::vector<Labels::value_type> label_scratch;  // ReadLabelsAt's views, reused
  // Packs the raw JSON kept by kinds whose raw_json is a SharedText (FromValueKeepingRaw), unless
  // pack_raw_json is off (Decoder::set_pack_raw_json).
  TextPacker packer;
  bool pack_raw_json = true;
  // While FromValueKeepingRaw decodes the fields of a kind whose raw JSON is a SharedText: the
  // text being decoded (`kept_from`, inside the caller's buffer), the kept copy, and the range
  // cut out of it (managedFields). DecodePodTemplate makes the template a view into the copy.
  struct KeptRaw {
    std::string_view from;
    const SharedText* kept = nullptr;
    size_t cut_begin = 0;
    size_t cut_end = 0;
  };
  KeptRaw kept_raw;

  // A padded view of `in`: in place when the caller promised padding, else copied to scratch.
  simdjson::padded_string_view Prepare(const JsonInput& in);
};

// Decodes the object at `v` (a value inside a padded buffer). `level` is the first parser not in
// use; kinds that keep raw JSON re-parse the value's text with parsers[level] and deeper.
using FromValueFn = Result<ObjectPtr> (*)(DecoderImpl&, od::value v, int level);

// Parses `padded_text` (inside a padded buffer) with parsers[level] and calls fn(root, level + 1).
Result<ObjectPtr> DecodeDocumentAt(DecoderImpl& d, std::string_view padded_text, int level,
                                   FromValueFn fn);

// Consumes a null (validating the literal) for containers that may be null.
Status NullOk(od::value v, std::string_view path);

// Iterates an object's fields; null counts as an empty object. fn(od::field&) → Status.
template <typename Fn>
Status ForEachField(od::value v, std::string_view path, Fn&& fn) {
  // type() only peeks, so it is also safe on a document's root value (is_null() is not).
  od::json_type t;
  if (auto ec = v.type().get(t); ec) return DecodeErrorAt(path, ec);
  if (t == od::json_type::null) return NullOk(v, path);
  od::object obj;
  if (auto ec = v.get_object().get(obj); ec) return DecodeErrorAt(path, ec);
  for (auto res : obj) {
    od::field f;
    if (auto ec = std::move(res).get(f); ec) return DecodeErrorAt(path, ec);
    Status s = fn(f);
    if (!s.ok()) return s;
  }
  return OkStatus();
}

// Iterates an array's elements; null counts as empty. fn(od::value, size_t index) → Status.
template <typename Fn>
Status ForEachElement(od::value v, std::string_view path, Fn&& fn) {
  od::json_type t;
  if (auto ec = v.type().get(t); ec) return DecodeErrorAt(path, ec);
  if (t == od::json_type::null) return NullOk(v, path);
  od::array arr;
  if (auto ec = v.get_array().get(arr); ec) return DecodeErrorAt(path, ec);
  size_t i = 0;
  for (auto res : arr) {
    od::value e;
    if (auto ec = std::move(res).get(e); ec) return DecodeErrorAt(path, ec);
    Status s = fn(e, i++);
    if (!s.ok()) return s;
  }
  return OkStatus();
}

Status ReadStringAt(od::value v, std::string_view path, std::string* out);
Status ReadUidAt(od::value v, std::string_view path, Uid* out);
Status ReadInt32At(od::value v, std::string_view path, int32_t* out);
Status ReadInt64At(od::value v, std::string_view path, int64_t* out);
Status ReadBoolAt(od::value v, std::string_view path, bool* out);
// null → nullopt.
Status ReadTimeAt(od::value v, std::string_view path, std::optional<Time>* out);
// A labels object, interned through d.interner (null → empty).
Status ReadLabelsAt(DecoderImpl& d, od::value v, std::string_view path, Labels* out);

enum class MetaMode { kFull, kPod };
// kPod drops annotations except the pod deletion cost, which goes to *deletion_cost (left as it
// is when absent).
Status DecodeObjectMeta(DecoderImpl& d, od::value v, ObjectMeta* meta, MetaMode mode,
                        int32_t* deletion_cost);
Status RequireName(const ObjectMeta& meta);

Status DecodeConditions(DecoderImpl& d, od::value v, std::string_view path,
                        std::vector<Condition>* out);
// matchLabels interned through d.interner, as metadata labels.
Status DecodeLabelSelector(DecoderImpl& d, od::value v, std::string_view path,
                           std::optional<LabelSelector>* out);
// Keeps the template's raw text and parses its metadata.labels with parsers[level].
Status DecodePodTemplate(DecoderImpl& d, od::value v, int level, PodTemplate* out);

Result<ObjectList> DecodeListWith(Decoder& decoder, const JsonInput& in, FromValueFn fn);
// d.generic_kind = the list's kind without its "List" suffix (what list items without their own
// "kind" are).
void SetGenericKindFromList(DecoderImpl& d, std::string_view list_kind);
Result<WatchEvent> DecodeWatchEventWith(Decoder& decoder, const JsonInput& in, FromValueFn fn);
// metav1.Status at `v` → Error.
Status DecodeStatusValue(od::value v, Error* out);

}  // namespace kcm::api::internal

namespace kcm::api::internal {

// The three codec entry points for a kind, from its FromValueFn.
template <FromValueFn Fn>
struct CodecFns {
  static Result<ObjectPtr> Decode(Decoder& decoder, JsonInput in) {
    DecoderImpl& d = decoder.impl();
    d.generic_kind.clear();
    return DecodeDocumentAt(d, d.Prepare(in), 0, Fn);
  }
  static Result<ObjectList> List(Decoder& decoder, JsonInput in) {
    return DecodeListWith(decoder, in, Fn);
  }
  // One element of a list's "items", decoded as DecodeListWith decodes it.
  static Result<ObjectPtr> ListItem(Decoder& decoder, JsonInput in, std::string_view list_kind) {
    DecoderImpl& d = decoder.impl();
    SetGenericKindFromList(d, list_kind);
    return DecodeDocumentAt(d, d.Prepare(in), 0, Fn);
  }
  static Result<WatchEvent> Watch(Decoder& decoder, JsonInput in) {
    return DecodeWatchEventWith(decoder, in, Fn);
  }
};

// The JSON decoders of a kind as its Codec (a kind read as protobuf too adds its own).
template <FromValueFn Fn>
constexpr Codec JsonCodec(std::string_view kind) {
  using F = CodecFns<Fn>;
  return Codec{.kind = kind,
               .decode = &F::Decode,
               .decode_list = &F::List,
               .decode_watch_event = &F::Watch,
               .decode_list_item = &F::ListItem};
}

template <typename T, FromValueFn Fn>
Result<std::shared_ptr<const T>> DecodeTyped(Decoder& decoder, JsonInput in) {
  auto obj = CodecFns<Fn>::Decode(decoder, in);
  if (!obj.ok()) return obj.error();
  return std::static_pointer_cast<const T>(std::move(obj).value());
}

// Kinds that keep their raw JSON: copy the value's text (without metadata.managedFields when
// `kDropManagedFields`, see strip_managed_fields.h), then decode the fields from a re-parse of it
// with parsers[level] (the text lies inside the caller's padded buffer); the cut is found on that
// same parse, before the fields are read from it.
template <typename T, Status (*Fields)(DecoderImpl&, od::value, int, T*),
          bool kDropManagedFields = false>
Result<ObjectPtr> FromValueKeepingRaw(DecoderImpl& d, od::value v, int level) {
  std::string_view raw;
  if (auto ec = RawJson(v, &raw); ec) return DecodeErrorAt("", ec);
  if (level >= kLevels) return DecodeErrorAt("", "document nested too deeply");
  od::document doc;
  auto psv = simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + kJsonPadding);
  if (auto ec = d.parsers[level].iterate(psv).get(doc); ec) return DecodeErrorAt("", ec);
  size_t cut_begin = raw.size(), cut_end = raw.size();
  if constexpr (kDropManagedFields) {
    bool found = false;
    if (auto ec = ManagedFieldsRange(doc, raw, &cut_begin, &cut_end, &found); ec) {
      return DecodeErrorAt("", ec);
    }
    if (!found) cut_begin = cut_end = raw.size();
  }
  auto obj = std::make_shared<T>();
  // Restores the enclosing kind's state on every return (an object decoded inside another).
  struct KeptRawScope {
    DecoderImpl& d;
    DecoderImpl::KeptRaw saved;
    ~KeptRawScope() { d.kept_raw = saved; }
  } scope{d, d.kept_raw};
  d.kept_raw = {};
  if constexpr (std::is_same_v<decltype(obj->raw_json), SharedText>) {
    obj->raw_json = d.pack_raw_json
                        ? d.packer.Pack(obj->Kind(), raw.substr(0, cut_begin), raw.substr(cut_end))
                        : SharedText::Concat(raw.substr(0, cut_begin), raw.substr(cut_end));
    d.kept_raw = {raw, &obj->raw_json, cut_begin, cut_end};
  } else {
    obj->raw_json.assign(raw.substr(0, cut_begin));
    obj->raw_json.append(raw.substr(cut_end));
  }
  od::value root;
  if (auto ec = doc.get_value().get(root); ec) return DecodeErrorAt("", ec);
  if (Status s = Fields(d, root, level + 1, obj.get()); !s.ok()) return s.error();
  return ObjectPtr(std::move(obj));
}

// Codec::kept_text_plain and Codec::pack_kept_text of a kind T whose raw JSON is a SharedText with
// its spec.template text a Sub of it; the second makes a copy whose text is packed, its template's
// view moved onto the packed buffer.
template <typename T>
bool RawJsonPlain(const Object& obj) {
  const auto* typed = dynamic_cast<const T*>(&obj);
  return typed != nullptr && !typed->raw_json.empty() && !typed->raw_json.packed();
}

template <typename T>
ObjectPtr WithPackedRawJson(const Object& obj, TextPacker& packer) {
  const auto* typed = dynamic_cast<const T*>(&obj);
  if (typed == nullptr || typed->raw_json.empty() || typed->raw_json.packed()) return nullptr;
  SharedText packed = packer.Pack(typed->Kind(), typed->raw_json.str(), {});
  if (!packed.packed()) return nullptr;
  auto copy = std::make_shared<T>(*typed);
  copy->spec.pod_template.raw_json =
      SharedText::Rebase(typed->spec.pod_template.raw_json, typed->raw_json, packed);
  copy->raw_json = std::move(packed);
  return copy;
}

}  // namespace kcm::api::internal
