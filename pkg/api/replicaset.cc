#include "pkg/api/replicaset.h"

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"

namespace kcm::api {
namespace internal {
namespace {

Status DecodeReplicaSetFields(DecoderImpl& d, od::value v, int level, ReplicaSet* rs) {
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "metadata"))
      return DecodeObjectMeta(d, f.value(), &rs->metadata, MetaMode::kFull, nullptr);
    if (KeyIs(f, "spec")) {
      return ForEachField(f.value(), "spec", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "replicas"))
          return ReadInt32At(sf.value(), "spec.replicas", &rs->spec.replicas);
        if (KeyIs(sf, "minReadySeconds")) {
          return ReadInt32At(sf.value(), "spec.minReadySeconds", &rs->spec.min_ready_seconds);
        }
        if (KeyIs(sf, "selector"))
          return DecodeLabelSelector(d, sf.value(), "spec.selector", &rs->spec.selector);
        if (KeyIs(sf, "template"))
          return DecodePodTemplate(d, sf.value(), level, &rs->spec.pod_template);
        return OkStatus();
      });
    }
    if (KeyIs(f, "status")) {
      ReplicaSetStatus& st = rs->status;
      return ForEachField(f.value(), "status", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "replicas")) return ReadInt32At(sf.value(), "status.replicas", &st.replicas);
        if (KeyIs(sf, "fullyLabeledReplicas")) {
          return ReadInt32At(sf.value(), "status.fullyLabeledReplicas", &st.fully_labeled_replicas);
        }
        if (KeyIs(sf, "readyReplicas"))
          return ReadInt32At(sf.value(), "status.readyReplicas", &st.ready_replicas);
        if (KeyIs(sf, "availableReplicas")) {
          return ReadInt32At(sf.value(), "status.availableReplicas", &st.available_replicas);
        }
        if (KeyIs(sf, "terminatingReplicas")) {
          int32_t n = 0;
          Status r = ReadInt32At(sf.value(), "status.terminatingReplicas", &n);
          if (r.ok()) st.terminating_replicas = n;
          return r;
        }
        if (KeyIs(sf, "observedGeneration")) {
          return ReadInt64At(sf.value(), "status.observedGeneration", &st.observed_generation);
        }
        if (KeyIs(sf, "conditions"))
          return DecodeConditions(d, sf.value(), "status.conditions", &st.conditions);
        return OkStatus();
      });
    }
    return OkStatus();
  });
  if (!s.ok()) return s;
  return RequireName(rs->metadata);
}

constexpr FromValueFn kReplicaSetFromValue =
    &FromValueKeepingRaw<ReplicaSet, &DecodeReplicaSetFields, true>;

}  // namespace
}  // namespace internal

json::Value ReplicaSetStatus::ToJson() const {
  json::Value out = json::Value::MakeObject();
  out.Set("replicas", json::Value::Int(replicas));
  if (fully_labeled_replicas != 0)
    out.Set("fullyLabeledReplicas", json::Value::Int(fully_labeled_replicas));
  if (ready_replicas != 0) out.Set("readyReplicas", json::Value::Int(ready_replicas));
  if (available_replicas != 0) out.Set("availableReplicas", json::Value::Int(available_replicas));
  if (terminating_replicas.has_value()) {
    out.Set("terminatingReplicas", json::Value::Int(*terminating_replicas));
  }
  if (observed_generation != 0)
    out.Set("observedGeneration", json::Value::Int(observed_generation));
  if (!conditions.empty()) out.Set("conditions", ConditionsToJson(conditions));
  return out;
}

Result<std::shared_ptr<const ReplicaSet>> DecodeReplicaSet(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<ReplicaSet, internal::kReplicaSetFromValue>(decoder, json);
}

const Codec& ReplicaSetCodec() {
  static const Codec codec = [] {
    Codec c = internal::JsonCodec<internal::kReplicaSetFromValue>("ReplicaSet");
    c.pack_kept_text = &internal::WithPackedRawJson<ReplicaSet>;
    c.kept_text_plain = &internal::RawJsonPlain<ReplicaSet>;
    return c;
  }();
  return codec;
}

}  // namespace kcm::api
