#include "pkg/api/object_builders.h"

#include <algorithm>
#include <span>

#include "pkg/api/hash.h"
#include "pkg/api/internal/decode_error.h"
#include "pkg/api/internal/raw_json.h"
#include "pkg/api/internal/raw_json_lex.h"
#include "pkg/api/resource.h"

namespace kcm::api {

using json::Value;

namespace {

Status MergeStatus(Value& obj, const Value& fresh, std::span<const std::string_view> modelled) {
  Value* st = obj.Find("status");
  if (st == nullptr || !st->is_object()) {
    obj.Set("status", fresh);
    return OkStatus();
  }
  for (std::string_view k : modelled) st->Erase(k);
  for (const auto& [k, v] : fresh.as_object()) st->Set(k, v);
  return OkStatus();
}

Value StringMap(const std::map<std::string, std::string>& m) {
  Value out = Value::MakeObject();
  for (const auto& [k, v] : m) out.Set(k, Value::String(v));
  return out;
}

// The status merge of MergeStatus spliced into the raw text: the unmodelled members of the
// object's "status" kept verbatim and in order, then `fresh`'s members. nullopt when the splice
// cannot be sure to match MergeStatus (raw_json.h), and the caller uses MergeStatus instead.
std::optional<std::string> SpliceStatus(std::string_view raw, const Value& fresh,
                                        std::span<const std::string_view> modelled) {
  size_t begin = 0, end = 0;
  std::optional<bool> found = internal::RawFindValue(raw, {"status"}, &begin, &end);
  if (!found) return std::nullopt;
  if (!*found || raw[begin] != '{') {
    return internal::RawSetMember(raw, {"status"}, json::Serialize(fresh));
  }
  size_t close = 0;
  auto members = internal::RawObjectMembers(raw, begin, &close);
  if (!members) return std::nullopt;
  std::string out;
  out.reserve(raw.size() + 256);
  out.append(raw.substr(0, begin));
  out.push_back('{');
  bool first = true;
  for (const internal::RawMember& m : *members) {
    bool ambiguous = false;
    internal::FindRawMember(*members, m.key, &ambiguous);
    if (ambiguous) return std::nullopt;  // an escaped or repeated key
    if (std::find(modelled.begin(), modelled.end(), m.key) != modelled.end()) continue;
    // A fresh member that is not in `modelled` would replace this one in place.
    if (fresh.Find(m.key) != nullptr) return std::nullopt;
    if (!first) out.push_back(',');
    first = false;
    out.append(raw.substr(m.begin, m.value_end - m.begin));
  }
  for (const auto& [k, v] : fresh.as_object()) {
    if (!first) out.push_back(',');
    first = false;
    json::AppendQuoted(k, &out);
    out.push_back(':');
    json::SerializeTo(v, &out);
  }
  out.push_back('}');
  out.append(raw.substr(end));
  return out;
}

Result<std::string> EncodeStatus(std::string_view raw, const Value& fresh,
                                 std::span<const std::string_view> modelled) {
  if (std::optional<std::string> spliced = SpliceStatus(raw, fresh, modelled)) {
    return std::move(*spliced);
  }
  return MutateRawJson(raw, [&](Value& obj) { return MergeStatus(obj, fresh, modelled); });
}

constexpr std::string_view kReplicaSetStatusFields[] = {
    "replicas",          "fullyLabeledReplicas", "readyReplicas",
    "availableReplicas", "terminatingReplicas",  "observedGeneration",
    "conditions"};
constexpr std::string_view kDeploymentStatusFields[] = {
    "observedGeneration",  "replicas",          "updatedReplicas",
    "readyReplicas",       "availableReplicas", "unavailableReplicas",
    "terminatingReplicas", "conditions",        "collisionCount"};

}  // namespace

Result<std::string> MutateRawJson(std::string_view raw_json,
                                  const std::function<Status(Value&)>& mutate) {
  auto v = json::Parse(raw_json);
  if (!v.ok()) return v.error();
  // Every mutation edits members (Value::Set throws on anything but an object or null).
  if (!v->is_object()) return internal::DecodeErrorAt("", "expected a JSON object");
  if (Status s = mutate(*v); !s.ok()) return s.error();
  return json::Serialize(*v);
}

std::string ReplicasMergePatch(std::string_view resource_version, int32_t replicas) {
  Value patch = Value::MakeObject();
  if (!resource_version.empty()) {
    patch.Set("metadata", Value::MakeObject())
        .Set("resourceVersion", Value::String(std::string(resource_version)));
  }
  patch.Set("spec", Value::MakeObject()).Set("replicas", Value::Int(replicas));
  return json::Serialize(patch);
}

Result<std::string> EncodeReplicaSetScale(const ReplicaSet& rs, int32_t replicas,
                                          const std::map<std::string, std::string>& annotations) {
  const std::string raw = rs.raw_json.str();
  std::optional<std::string> spliced =
      internal::RawSetMember(raw, {"spec", "replicas"}, std::to_string(replicas));
  for (auto it = annotations.begin(); spliced && it != annotations.end(); ++it) {
    std::string value;
    json::AppendQuoted(it->second, &value);
    spliced = internal::RawSetMember(*spliced, {"metadata", "annotations", it->first}, value);
  }
  if (spliced) return std::move(*spliced);
  return MutateRawJson(raw, [&](Value& obj) -> Status {
    if (Status s = json::SetPath(obj, {"spec", "replicas"}, Value::Int(replicas)); !s.ok())
      return s;
    for (const auto& [k, v] : annotations) {
      if (Status s = json::SetPath(obj, {"metadata", "annotations", k}, Value::String(v));
          !s.ok()) {
        return s;
      }
    }
    return OkStatus();
  });
}

Result<std::string> ReplaceAnnotations(std::string_view raw_json,
                                       const std::map<std::string, std::string>& annotations) {
  std::optional<std::string> spliced =
      annotations.empty() ? internal::RawEraseMember(raw_json, {"metadata", "annotations"})
                          : internal::RawSetMember(raw_json, {"metadata", "annotations"},
                                                   json::Serialize(StringMap(annotations)));
  if (spliced) return std::move(*spliced);
  return MutateRawJson(raw_json, [&](Value& obj) -> Status {
    if (annotations.empty()) {
      json::ErasePath(obj, {"metadata", "annotations"});
      return OkStatus();
    }
    return json::SetPath(obj, {"metadata", "annotations"}, StringMap(annotations));
  });
}

Result<std::string> EncodeReplicaSetStatus(const ReplicaSet& rs, const ReplicaSetStatus& status) {
  return EncodeStatus(rs.raw_json.str(), status.ToJson(), kReplicaSetStatusFields);
}

Result<std::string> EncodeDeploymentStatus(std::string_view raw_json,
                                           const DeploymentStatus& status) {
  return EncodeStatus(raw_json, status.ToJson(), kDeploymentStatusFields);
}

Result<std::string> EncodeDeploymentStatus(const Deployment& d, const DeploymentStatus& status) {
  return EncodeDeploymentStatus(d.raw_json.str(), status);
}

json::Value OwnerReferenceToJson(const OwnerReference& ref) {
  Value out = Value::MakeObject();
  out.Set("apiVersion", Value::String(ref.api_version));
  out.Set("kind", Value::String(ref.kind));
  out.Set("name", Value::String(ref.name));
  out.Set("uid", Value::String(ref.uid));
  if (ref.controller) out.Set("controller", Value::Bool(true));
  if (ref.block_owner_deletion) out.Set("blockOwnerDeletion", Value::Bool(true));
  return out;
}

OwnerReference ControllerOwnerReference(std::string api_version, std::string kind,
                                        const ObjectMeta& owner) {
  return OwnerReference{std::move(api_version), std::move(kind), owner.name, owner.uid, true, true};
}

namespace {

// PodFromTemplate's body built as text: the template's metadata members and spec copied
// verbatim. nullopt when the template's text cannot be read unambiguously (raw_json.h).
std::optional<std::string> SplicePodFromTemplate(std::string_view tmpl,
                                                 std::string_view generate_name,
                                                 std::string_view ns,
                                                 const OwnerReference* controller_ref) {
  const size_t open = internal::SkipJsonSpace(tmpl, 0);
  size_t close = 0;
  auto top = internal::RawObjectMembers(tmpl, open, &close);
  if (!top) return std::nullopt;
  bool ambiguous = false;
  const internal::RawMember* meta = internal::FindRawMember(*top, "metadata", &ambiguous);
  const internal::RawMember* spec = internal::FindRawMember(*top, "spec", &ambiguous);
  if (ambiguous) return std::nullopt;
  std::optional<std::vector<internal::RawMember>> meta_members;
  if (meta != nullptr) {
    meta_members = internal::RawObjectMembers(tmpl, meta->value_begin, &close);
    if (!meta_members) return std::nullopt;  // also a null metadata: the document model's case
  }
  std::string out;
  out.reserve(tmpl.size() + 512);
  out.append(R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":)");
  json::AppendQuoted(generate_name, &out);
  if (!ns.empty()) {
    out.append(R"(,"namespace":)");
    json::AppendQuoted(ns, &out);
  }
  if (meta_members) {
    for (std::string_view k : {"labels", "annotations", "finalizers"}) {
      const internal::RawMember* m = internal::FindRawMember(*meta_members, k, &ambiguous);
      if (ambiguous) return std::nullopt;
      if (m == nullptr) continue;
      std::string_view value = tmpl.substr(m->value_begin, m->value_end - m->value_begin);
      if (value == "null") continue;
      out.push_back(',');
      json::AppendQuoted(k, &out);
      out.push_back(':');
      out.append(value);
    }
  }
  if (controller_ref != nullptr) {
    out.append(R"(,"ownerReferences":[)");
    json::SerializeTo(OwnerReferenceToJson(*controller_ref), &out);
    out.push_back(']');
  }
  out.append(R"(},"spec":)");
  if (spec != nullptr) {
    out.append(tmpl.substr(spec->value_begin, spec->value_end - spec->value_begin));
  } else {
    out.append("{}");
  }
  out.push_back('}');
  return out;
}

}  // namespace

Result<std::string> PodFromTemplate(const PodTemplate& pod_template, std::string_view generate_name,
                                    std::string_view ns, const OwnerReference* controller_ref) {
  if (std::optional<std::string> spliced =
          SplicePodFromTemplate(pod_template.raw_json.str(), generate_name, ns, controller_ref)) {
    return std::move(*spliced);
  }
  auto tmpl = pod_template.ToJson();
  if (!tmpl.ok()) return tmpl.error();
  Value meta = Value::MakeObject();
  meta.Set("generateName", Value::String(std::string(generate_name)));
  if (!ns.empty()) meta.Set("namespace", Value::String(std::string(ns)));
  for (std::string_view k : {"labels", "annotations", "finalizers"}) {
    if (const Value* v = json::GetPath(*tmpl, {"metadata", k}); v != nullptr && !v->is_null()) {
      meta.Set(k, *v);
    }
  }
  if (controller_ref != nullptr) {
    meta.Set("ownerReferences", Value::MakeArray({OwnerReferenceToJson(*controller_ref)}));
  }
  Value pod = Value::MakeObject();
  pod.Set("apiVersion", Value::String(kPods.ApiVersion()));
  pod.Set("kind", Value::String(std::string(kPods.kind)));
  pod.Set("metadata", std::move(meta));
  const Value* spec = tmpl->Find("spec");
  pod.Set("spec", spec != nullptr ? *spec : Value::MakeObject());
  return json::Serialize(pod);
}

Result<std::string> NewReplicaSetFromDeployment(const Deployment& d,
                                                const NewReplicaSetOptions& opts) {
  auto tmpl = d.spec.pod_template.ToJson();
  if (!tmpl.ok()) return tmpl.error();
  const std::string& hash = opts.pod_template_hash;
  if (Status s =
          json::SetPath(*tmpl, {"metadata", "labels", kPodTemplateHashLabel}, Value::String(hash));
      !s.ok()) {
    return s.error();
  }
  Value selector = d.spec.selector ? d.spec.selector->ToJson() : Value::MakeObject();
  if (Status s =
          json::SetPath(selector, {"matchLabels", kPodTemplateHashLabel}, Value::String(hash));
      !s.ok()) {
    return s.error();
  }
  std::map<std::string, std::string> labels = d.spec.pod_template.labels.ToMap();
  labels[std::string(kPodTemplateHashLabel)] = hash;

  Value meta = Value::MakeObject();
  meta.Set("name", Value::String(d.metadata.name + "-" + hash));
  meta.Set("namespace", Value::String(d.metadata.namespace_));
  meta.Set("labels", StringMap(labels));
  if (!opts.annotations.empty()) meta.Set("annotations", StringMap(opts.annotations));
  Value owners = Value::MakeArray();
  owners.as_array().push_back(OwnerReferenceToJson(ControllerOwnerReference(
      kDeployments.ApiVersion(), std::string(kDeployments.kind), d.metadata)));
  meta.Set("ownerReferences", std::move(owners));

  Value spec = Value::MakeObject();
  spec.Set("replicas", Value::Int(opts.replicas));
  if (d.spec.min_ready_seconds != 0)
    spec.Set("minReadySeconds", Value::Int(d.spec.min_ready_seconds));
  spec.Set("selector", std::move(selector));
  spec.Set("template", std::move(tmpl).value());

  Value rs = Value::MakeObject();
  rs.Set("apiVersion", Value::String(kReplicaSets.ApiVersion()));
  rs.Set("kind", Value::String(std::string(kReplicaSets.kind)));
  rs.Set("metadata", std::move(meta));
  rs.Set("spec", std::move(spec));
  return json::Serialize(rs);
}

Result<std::string> NewPodFromReplicaSet(const ReplicaSet& rs) {
  if (rs.spec.pod_template.labels.empty()) {
    return Error::Local("InvalidArgument", "unable to create pods, no labels in the template of " +
                                               rs.metadata.namespace_ + "/" + rs.metadata.name);
  }
  const OwnerReference owner = ControllerOwnerReference(
      kReplicaSets.ApiVersion(), std::string(kReplicaSets.kind), rs.metadata);
  return PodFromTemplate(rs.spec.pod_template, rs.metadata.name + "-", rs.metadata.namespace_,
                         &owner);
}

std::string AdoptOwnerPatch(const OwnerReference& owner, std::string_view object_uid) {
  Value refs = Value::MakeArray();
  refs.as_array().push_back(OwnerReferenceToJson(owner));
  Value meta = Value::MakeObject();
  meta.Set("ownerReferences", std::move(refs));
  meta.Set("uid", Value::String(std::string(object_uid)));
  Value patch = Value::MakeObject();
  patch.Set("metadata", std::move(meta));
  return json::Serialize(patch);
}

std::string ReleaseOwnerPatch(std::string_view owner_uid, std::string_view object_uid) {
  Value del = Value::MakeObject();
  del.Set("$patch", Value::String("delete"));
  del.Set("uid", Value::String(std::string(owner_uid)));
  Value refs = Value::MakeArray();
  refs.as_array().push_back(std::move(del));
  Value meta = Value::MakeObject();
  meta.Set("ownerReferences", std::move(refs));
  meta.Set("uid", Value::String(std::string(object_uid)));
  Value patch = Value::MakeObject();
  patch.Set("metadata", std::move(meta));
  return json::Serialize(patch);
}

}  // namespace kcm::api
