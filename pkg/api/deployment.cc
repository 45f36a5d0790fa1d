#include "pkg/api/deployment.h"

#include "pkg/api/codec.h"
#include "pkg/api/internal/decode.h"

namespace kcm::api {
namespace internal {
namespace {

Status ReadOptInt32At(od::value v, std::string_view path, std::optional<int32_t>* out) {
  bool is_null = false;
  if (auto ec = v.is_null().get(is_null); ec) return DecodeErrorAt(path, ec);
  if (is_null) {
    out->reset();
    return OkStatus();
  }
  int32_t n = 0;
  Status s = ReadInt32At(v, path, &n);
  if (s.ok()) *out = n;
  return s;
}

Status ReadIntOrStringAt(DecoderImpl& d, od::value v, std::string_view path,
                         std::optional<IntOrString>* out) {
  od::json_type t;
  if (auto ec = v.type().get(t); ec) return DecodeErrorAt(path, ec);
  if (t == od::json_type::null) {
    out->reset();
    return OkStatus();
  }
  if (t == od::json_type::string) {
    std::string_view s;
    if (auto ec = v.get_string().get(s); ec) return DecodeErrorAt(path, ec);
    *out = IntOrString::FromString(d.interner->InternString(s));
    return OkStatus();
  }
  int32_t n = 0;
  Status st = ReadInt32At(v, path, &n);
  if (st.ok()) *out = IntOrString::FromInt(n);
  return st;
}

Status DecodeStrategy(DecoderImpl& d, od::value v, DeploymentStrategy* out) {
  return ForEachField(v, "spec.strategy", [&](od::field& f) -> Status {
    if (KeyIs(f, "type")) return ReadStringAt(f.value(), "spec.strategy.type", &out->type);
    if (KeyIs(f, "rollingUpdate")) {
      bool is_null = false;
      if (auto ec = f.value().is_null().get(is_null); ec) {
        return DecodeErrorAt("spec.strategy.rollingUpdate", ec);
      }
      if (is_null) return OkStatus();
      RollingUpdateDeployment ru;
      Status s =
          ForEachField(f.value(), "spec.strategy.rollingUpdate", [&](od::field& rf) -> Status {
            if (KeyIs(rf, "maxSurge")) {
              return ReadIntOrStringAt(d, rf.value(), "spec.strategy.rollingUpdate.maxSurge",
                                       &ru.max_surge);
            }
            if (KeyIs(rf, "maxUnavailable")) {
              return ReadIntOrStringAt(d, rf.value(), "spec.strategy.rollingUpdate.maxUnavailable",
                                       &ru.max_unavailable);
            }
            return OkStatus();
          });
      if (s.ok()) out->rolling_update = std::move(ru);
      return s;
    }
    return OkStatus();
  });
}

Status DecodeDeploymentFields(DecoderImpl& d, od::value v, int level, Deployment* dep) {
  Status s = ForEachField(v, "", [&](od::field& f) -> Status {
    if (KeyIs(f, "metadata"))
      return DecodeObjectMeta(d, f.value(), &dep->metadata, MetaMode::kFull, nullptr);
    if (KeyIs(f, "spec")) {
      DeploymentSpec& sp = dep->spec;
      return ForEachField(f.value(), "spec", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "replicas")) return ReadInt32At(sf.value(), "spec.replicas", &sp.replicas);
        if (KeyIs(sf, "selector"))
          return DecodeLabelSelector(d, sf.value(), "spec.selector", &sp.selector);
        if (KeyIs(sf, "template")) return DecodePodTemplate(d, sf.value(), level, &sp.pod_template);
        if (KeyIs(sf, "strategy")) return DecodeStrategy(d, sf.value(), &sp.strategy);
        if (KeyIs(sf, "minReadySeconds")) {
          return ReadInt32At(sf.value(), "spec.minReadySeconds", &sp.min_ready_seconds);
        }
        if (KeyIs(sf, "revisionHistoryLimit")) {
          return ReadOptInt32At(sf.value(), "spec.revisionHistoryLimit",
                                &sp.revision_history_limit);
        }
        if (KeyIs(sf, "paused")) return ReadBoolAt(sf.value(), "spec.paused", &sp.paused);
        if (KeyIs(sf, "progressDeadlineSeconds")) {
          return ReadOptInt32At(sf.value(), "spec.progressDeadlineSeconds",
                                &sp.progress_deadline_seconds);
        }
        return OkStatus();
      });
    }
    if (KeyIs(f, "status")) {
      DeploymentStatus& st = dep->status;
      return ForEachField(f.value(), "status", [&](od::field& sf) -> Status {
        if (KeyIs(sf, "observedGeneration")) {
          return ReadInt64At(sf.value(), "status.observedGeneration", &st.observed_generation);
        }
        if (KeyIs(sf, "replicas")) return ReadInt32At(sf.value(), "status.replicas", &st.replicas);
        if (KeyIs(sf, "updatedReplicas"))
          return ReadInt32At(sf.value(), "status.updatedReplicas", &st.updated_replicas);
        if (KeyIs(sf, "readyReplicas"))
          return ReadInt32At(sf.value(), "status.readyReplicas", &st.ready_replicas);
        if (KeyIs(sf, "availableReplicas")) {
          return ReadInt32At(sf.value(), "status.availableReplicas", &st.available_replicas);
        }
        if (KeyIs(sf, "unavailableReplicas")) {
          return ReadInt32At(sf.value(), "status.unavailableReplicas", &st.unavailable_replicas);
        }
        if (KeyIs(sf, "terminatingReplicas")) {
          return ReadOptInt32At(sf.value(), "status.terminatingReplicas", &st.terminating_replicas);
        }
        if (KeyIs(sf, "collisionCount")) {
          return ReadOptInt32At(sf.value(), "status.collisionCount", &st.collision_count);
        }
        if (KeyIs(sf, "conditions"))
          return DecodeConditions(d, sf.value(), "status.conditions", &st.conditions);
        return OkStatus();
      });
    }
    return OkStatus();
  });
  if (!s.ok()) return s;
  return RequireName(dep->metadata);
}

constexpr FromValueFn kDeploymentFromValue =
    &FromValueKeepingRaw<Deployment, &DecodeDeploymentFields, true>;

}  // namespace
}  // namespace internal

json::Value DeploymentStatus::ToJson() const {
  json::Value out = json::Value::MakeObject();
  if (observed_generation != 0)
    out.Set("observedGeneration", json::Value::Int(observed_generation));
  if (replicas != 0) out.Set("replicas", json::Value::Int(replicas));
  if (updated_replicas != 0) out.Set("updatedReplicas", json::Value::Int(updated_replicas));
  if (ready_replicas != 0) out.Set("readyReplicas", json::Value::Int(ready_replicas));
  if (available_replicas != 0) out.Set("availableReplicas", json::Value::Int(available_replicas));
  if (unavailable_replicas != 0)
    out.Set("unavailableReplicas", json::Value::Int(unavailable_replicas));
  if (terminating_replicas.has_value()) {
    out.Set("terminatingReplicas", json::Value::Int(*terminating_replicas));
  }
  if (!conditions.empty()) out.Set("conditions", ConditionsToJson(conditions));
  if (collision_count.has_value()) out.Set("collisionCount", json::Value::Int(*collision_count));
  return out;
}

Result<std::shared_ptr<const Deployment>> DecodeDeployment(Decoder& decoder, JsonInput json) {
  return internal::DecodeTyped<Deployment, internal::kDeploymentFromValue>(decoder, json);
}

const Codec& DeploymentCodec() {
  static const Codec codec = [] {
    Codec c = internal::JsonCodec<internal::kDeploymentFromValue>("Deployment");
    c.pack_kept_text = &internal::WithPackedRawJson<Deployment>;
    c.kept_text_plain = &internal::RawJsonPlain<Deployment>;
    return c;
  }();
  return codec;
}

}  // namespace kcm::api
