// Write-path encoders (decision 1: writes start from the object's raw JSON so nothing we do not
// model is lost): merge patches, full-object encodes with changed fields, a new ReplicaSet from a
// Deployment, a Pod create body from a ReplicaSet, and ownerReference adopt/release patches.
// Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/api/deployment.h"
#include "pkg/api/json.h"
#include "pkg/api/object_meta.h"
#include "pkg/api/replicaset.h"
#include "pkg/util/result.h"

namespace kcm::api {

// Parses `raw_json`, lets `mutate` change it, serializes the result (compact). `raw_json` must be
// an object's text (a DecodeError otherwise, before `mutate` is called).
Result<std::string> MutateRawJson(std::string_view raw_json,
                                  const std::function<Status(json::Value&)>& mutate);

// JSON merge patch (RFC 7386) {"metadata":{"resourceVersion":rv},"spec":{"replicas":n}}; the
// resourceVersion makes it a compare-and-swap (409 Conflict when stale). rv "" omits it.
std::string ReplicasMergePatch(std::string_view resource_version, int32_t replicas);

// Full ReplicaSet (for PUT) with spec.replicas = replicas and `annotations` merged into
// metadata.annotations (e.g. desired-replicas / max-replicas, D5); everything else verbatim.
Result<std::string> EncodeReplicaSetScale(const ReplicaSet& rs, int32_t replicas,
                                          const std::map<std::string, std::string>& annotations);

// Full object (for PUT .../status) with the modelled status fields replaced by `status`
// (zero fields removed as omitempty would) and unmodelled status fields kept.
// Spliced into the raw text when it can be done unambiguously (internal/raw_json.h), else through
// MutateRawJson; the two give the same object.
Result<std::string> EncodeReplicaSetStatus(const ReplicaSet& rs, const ReplicaSetStatus& status);
Result<std::string> EncodeDeploymentStatus(const Deployment& d, const DeploymentStatus& status);
// The same from a Deployment's raw JSON (e.g. one whose annotations were just replaced).
Result<std::string> EncodeDeploymentStatus(std::string_view raw_json,
                                           const DeploymentStatus& status);

// `raw_json` (an object) with metadata.annotations replaced by `annotations`, or the member
// removed when `annotations` is empty; everything else verbatim.
Result<std::string> ReplaceAnnotations(std::string_view raw_json,
                                       const std::map<std::string, std::string>& annotations);

struct NewReplicaSetOptions {
  std::string pod_template_hash;  // from ComputePodTemplateHash
  int32_t replicas = 0;
  std::map<std::string, std::string> annotations;  // already filtered per D5
};

// The create body of a Deployment's new ReplicaSet (D4): name "<deploy>-<hash>", namespace, labels
// = template labels + pod-template-hash, annotations, one controller ownerReference to the
// Deployment, spec {replicas, minReadySeconds, selector + hash label, template verbatim with the
// hash label added}.
Result<std::string> NewReplicaSetFromDeployment(const Deployment& d,
                                                const NewReplicaSetOptions& opts);

// The create body of a pod from a template (upstream GetPodFromTemplate): generateName, the
// namespace when not empty, the template's labels, annotations and finalizers, the controller
// ownerReference when given, the template's spec verbatim. Built as text from the template's raw
// JSON when it reads unambiguously (internal/raw_json.h), else through the document model; the
// two give the same object.
Result<std::string> PodFromTemplate(const PodTemplate& pod_template, std::string_view generate_name,
                                    std::string_view ns, const OwnerReference* controller_ref);

// The create body of a pod from a ReplicaSet's template (R11): generateName "<rs>-", namespace,
// the template's labels, annotations and finalizers, one ownerReference {apps/v1, ReplicaSet,
// name, uid, controller: true, blockOwnerDeletion: true}, the template's spec verbatim.
// "Invalid" when the template has no labels.
Result<std::string> NewPodFromReplicaSet(const ReplicaSet& rs);

json::Value OwnerReferenceToJson(const OwnerReference& ref);
// A controller ownerReference (controller and blockOwnerDeletion true) to `owner`.
OwnerReference ControllerOwnerReference(std::string api_version, std::string kind,
                                        const ObjectMeta& owner);

// Strategic merge patches of ownerReferences (R13), with the object's uid as a precondition.
std::string AdoptOwnerPatch(const OwnerReference& owner, std::string_view object_uid);
std::string ReleaseOwnerPatch(std::string_view owner_uid, std::string_view object_uid);

}  // namespace kcm::api
