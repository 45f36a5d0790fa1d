#include "pkg/api/object_builders.h"

#include "pkg/api/hash.h"

namespace kcm::api {

using json::Value;

namespace {

Status MergeStatus(Value& obj, const Value& fresh,
                   std::initializer_list<std::string_view> modelled) {
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

}  // namespace

Result<std::string> MutateRawJson(std::string_view raw_json,
                                  const std::function<Status(Value&)>& mutate) {
  auto v = json::Parse(raw_json);
  if (!v.ok()) return v.error();
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
  return MutateRawJson(rs.raw_json, [&](Value& obj) -> Status {
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

Result<std::string> EncodeReplicaSetStatus(const ReplicaSet& rs, const ReplicaSetStatus& status) {
  return MutateRawJson(rs.raw_json, [&](Value& obj) {
    return MergeStatus(obj, status.ToJson(),
                       {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                        "terminatingReplicas", "observedGeneration", "conditions"});
  });
}

Result<std::string> EncodeDeploymentStatus(const Deployment& d, const DeploymentStatus& status) {
  return MutateRawJson(d.raw_json, [&](Value& obj) {
    return MergeStatus(
        obj, status.ToJson(),
        {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
         "unavailableReplicas", "terminatingReplicas", "conditions", "collisionCount"});
  });
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
  owners.as_array().push_back(
      OwnerReferenceToJson(ControllerOwnerReference("apps/v1", "Deployment", d.metadata)));
  meta.Set("ownerReferences", std::move(owners));

  Value spec = Value::MakeObject();
  spec.Set("replicas", Value::Int(opts.replicas));
  if (d.spec.min_ready_seconds != 0)
    spec.Set("minReadySeconds", Value::Int(d.spec.min_ready_seconds));
  spec.Set("selector", std::move(selector));
  spec.Set("template", std::move(tmpl).value());

  Value rs = Value::MakeObject();
  rs.Set("apiVersion", Value::String("apps/v1"));
  rs.Set("kind", Value::String("ReplicaSet"));
  rs.Set("metadata", std::move(meta));
  rs.Set("spec", std::move(spec));
  return json::Serialize(rs);
}

Result<std::string> NewPodFromReplicaSet(const ReplicaSet& rs) {
  if (rs.spec.pod_template.labels.empty()) {
    return Error::Local("InvalidArgument", "unable to create pods, no labels in the template of " +
                                               rs.metadata.namespace_ + "/" + rs.metadata.name);
  }
  auto tmpl = rs.spec.pod_template.ToJson();
  if (!tmpl.ok()) return tmpl.error();
  Value meta = Value::MakeObject();
  meta.Set("generateName", Value::String(rs.metadata.name + "-"));
  meta.Set("namespace", Value::String(rs.metadata.namespace_));
  for (std::string_view k : {"labels", "annotations", "finalizers"}) {
    if (const Value* v = json::GetPath(*tmpl, {"metadata", k}); v != nullptr && !v->is_null()) {
      meta.Set(k, *v);
    }
  }
  Value owners = Value::MakeArray();
  owners.as_array().push_back(
      OwnerReferenceToJson(ControllerOwnerReference("apps/v1", "ReplicaSet", rs.metadata)));
  meta.Set("ownerReferences", std::move(owners));

  Value pod = Value::MakeObject();
  pod.Set("apiVersion", Value::String("v1"));
  pod.Set("kind", Value::String("Pod"));
  pod.Set("metadata", std::move(meta));
  const Value* spec = tmpl->Find("spec");
  pod.Set("spec", spec != nullptr ? *spec : Value::MakeObject());
  return json::Serialize(pod);
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
