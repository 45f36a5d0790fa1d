#include "pkg/api/lease.h"

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"
#include "pkg/api/json.h"
#include "pkg/api/time.h"

namespace kcm::api {
namespace internal {
namespace {

Status ReadOptInt32(od::value v, std::string_view path, std::optional<int32_t>* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (is_null) return OkStatus();
  int32_t n = 0;
  Status s = ReadInt32At(v, path, &n);
  if (s.ok()) *out = n;
  return s;
}

Status DecodeLeaseFields(DecoderImpl& d, od::value v, int, Lease* lease) {
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "metadata"))
      return DecodeObjectMeta(d, f.value(), &lease->metadata, MetaMode::kFull, nullptr);
    if (!KeyIs(f, "spec")) return OkStatus();
    LeaseSpec& sp = lease->spec;
    return ForEachField(f.value(), "spec", [&](od::field& sf) -> Status {
      if (KeyIs(sf, "holderIdentity")) {
        bool is_null = false;
        if (auto ec = sf.value().is_null().get(is_null); ec)
          return DecodeErrorAt("spec.holderIdentity", ec);
        if (is_null) return OkStatus();
        std::string h;
        Status r = ReadStringAt(sf.value(), "spec.holderIdentity", &h);
        if (r.ok()) sp.holder_identity = std::move(h);
        return r;
      }
      if (KeyIs(sf, "leaseDurationSeconds")) {
        return ReadOptInt32(sf.value(), "spec.leaseDurationSeconds", &sp.lease_duration_seconds);
      }
      if (KeyIs(sf, "acquireTime"))
        return ReadTimeAt(sf.value(), "spec.acquireTime", &sp.acquire_time);
      if (KeyIs(sf, "renewTime")) return ReadTimeAt(sf.value(), "spec.renewTime", &sp.renew_time);
      if (KeyIs(sf, "leaseTransitions")) {
        return ReadOptInt32(sf.value(), "spec.leaseTransitions", &sp.lease_transitions);
      }
      return OkStatus();
    });
  });
  if (!s.ok()) return s;
  return RequireName(lease->metadata);
}

constexpr FromValueFn kLeaseFromValue = &FromValueKeepingRaw<Lease, &DecodeLeaseFields>;

}  // namespace
}  // namespace internal

Result<std::string> Lease::ToJson() const {
  json::Value obj = json::Value::MakeObject();
  if (!raw_json.empty()) {
    auto parsed = json::Parse(raw_json);
    if (!parsed.ok()) return parsed.error();
    obj = std::move(parsed).value();
  } else {
    obj.Set("apiVersion", json::Value::String("coordination.k8s.io/v1"));
    obj.Set("kind", json::Value::String("Lease"));
  }
  auto set = [&](json::Path path, json::Value v) { return json::SetPath(obj, path, std::move(v)); };
  if (Status s = set({"metadata", "name"}, json::Value::String(metadata.name)); !s.ok())
    return s.error();
  if (!metadata.namespace_.empty()) {
    if (Status s = set({"metadata", "namespace"}, json::Value::String(metadata.namespace_));
        !s.ok()) {
      return s.error();
    }
  }
  if (!metadata.resource_version.empty()) {
    if (Status s =
            set({"metadata", "resourceVersion"}, json::Value::String(metadata.resource_version));
        !s.ok()) {
      return s.error();
    }
  }
  // metadata.annotations as held (decoded from raw_json, so unchanged unless edited): the shard
  // map and the work a sharded replica publishes live there (docs/design/sharding.md).
  if (json::Value* meta = obj.Find("metadata"); meta != nullptr && meta->is_object()) {
    if (metadata.annotations.empty()) {
      meta->Erase("annotations");
    } else {
      json::Value annotations = json::Value::MakeObject();
      for (const auto& [k, v] : metadata.annotations) annotations.Set(k, json::Value::String(v));
      meta->Set("annotations", std::move(annotations));
    }
  }
  json::Value sp = json::Value::MakeObject();
  if (spec.holder_identity) sp.Set("holderIdentity", json::Value::String(*spec.holder_identity));
  if (spec.lease_duration_seconds) {
    sp.Set("leaseDurationSeconds", json::Value::Int(*spec.lease_duration_seconds));
  }
  if (spec.acquire_time)
    sp.Set("acquireTime", json::Value::String(FormatMicroTime(*spec.acquire_time)));
  if (spec.renew_time) sp.Set("renewTime", json::Value::String(FormatMicroTime(*spec.renew_time)));
  if (spec.lease_transitions) sp.Set("leaseTransitions", json::Value::Int(*spec.lease_transitions));
  // Keep spec fields we do not model (e.g. strategy, preferredHolder) from the raw object.
  if (const json::Value* old = obj.Find("spec"); old != nullptr && old->is_object()) {
    for (const auto& [k, v] : old->as_object()) {
      if (sp.Find(k) == nullptr && k != "holderIdentity" && k != "leaseDurationSeconds" &&
          k != "acquireTime" && k != "renewTime" && k != "leaseTransitions") {
        sp.Set(k, v);
      }
    }
  }
  obj.Set("spec", std::move(sp));
  return json::Serialize(obj);
}

Result<std::shared_ptr<const Lease>> DecodeLease(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<Lease, internal::kLeaseFromValue>(decoder, json);
}

const Codec& LeaseCodec() {
  static const Codec codec = internal::JsonCodec<internal::kLeaseFromValue>("Lease");
  return codec;
}

}  // namespace kcm::api
