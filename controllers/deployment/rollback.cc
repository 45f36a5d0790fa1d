// Rollback through the deprecated.deployment.rollback.to annotation (upstream rollback.go).
// `kubectl rollout undo` does not use it (it patches the template client-side).

#include <map>
#include <string>

#include "controllers/deployment/deployment_controller.h"
#include "pkg/api/hash.h"
#include "pkg/api/object_builders.h"
#include "pkg/api/pod_template.h"
#include "pkg/util/klog.h"

namespace kcm::deployment {

Status DeploymentController::Rollback(Deployment& d, const ReplicaSets& rss) {
  Result<AllReplicaSets> all = GetAllReplicaSetsAndSyncRevision(d, rss, true);
  if (!all.ok()) return all.error();
  ReplicaSets all_rss = all->old_rss;
  if (all->new_rs) all_rss.push_back(all->new_rs);

  int64_t revision = util::GetRollbackTo(d).value_or(0);
  if (revision == 0) {
    // 0 means the revision before the current one.
    revision = util::LastRevision(all_rss);
    if (revision == 0) {
      EmitRollbackWarningEvent(d, util::kRollbackRevisionNotFound, "Unable to find last revision.");
      return UpdateDeploymentAndClearRollbackTo(d);
    }
  }
  for (const auto& rs : all_rss) {
    if (util::RevisionOf(*rs) != revision) continue;
    Result<bool> performed = RollbackToTemplate(d, *rs);
    if (performed.ok() && *performed) {
      Eventf(d, "Normal", util::kRollbackDone,
             "Rolled back deployment \"" + d.metadata.name + "\" to revision " +
                 std::to_string(revision));
    }
    return performed.ok() ? OkStatus() : Status(performed.error());
  }
  EmitRollbackWarningEvent(d, util::kRollbackRevisionNotFound,
                           "Unable to find the revision to rollback to.");
  return UpdateDeploymentAndClearRollbackTo(d);
}

Result<bool> DeploymentController::RollbackToTemplate(Deployment& d, const api::ReplicaSet& rs) {
  Result<bool> equal = api::EqualIgnoreHash(d.spec.pod_template, rs.spec.pod_template);
  if (!equal.ok()) return equal.error();
  bool performed = false;
  if (!*equal) {
    // The RS's template without its pod-template-hash label becomes the Deployment's.
    Result<api::json::Value> tmpl = rs.spec.pod_template.ToJson();
    if (!tmpl.ok()) return tmpl.error();
    if (api::json::Value* meta = tmpl->Find("metadata")) {
      if (api::json::Value* labels = meta->Find("labels"))
        labels->Erase(api::kPodTemplateHashLabel);
    }
    d.spec.pod_template.raw_json = api::json::Serialize(*tmpl);
    std::map<std::string, std::string> labels = rs.spec.pod_template.labels.ToMap();
    labels.erase(std::string(api::kPodTemplateHashLabel));
    d.spec.pod_template.labels = labels;
    // The annotations go back with the template (e.g. change-cause), so the RS made from it
    // gets them again.
    d.metadata.annotations = util::DeploymentAnnotationsFromReplicaSet(d.metadata.annotations, rs);
    performed = true;
  } else {
    logger_.V(4).Info(
        "Rolling back to a revision that contains the same template as current deployment, "
        "skipping rollback...",
        "deployment", klog::KRef(d.metadata.namespace_, d.metadata.name));
    EmitRollbackWarningEvent(d, util::kRollbackTemplateUnchanged,
                             "The rollback revision contains the same template as current "
                             "deployment \"" +
                                 d.metadata.name + "\"");
  }
  if (Status s = UpdateDeploymentAndClearRollbackTo(d); !s.ok()) return s.error();
  return performed;
}

// The annotation is always cleared, whether or not the rollback happened.
Status DeploymentController::UpdateDeploymentAndClearRollbackTo(Deployment& d) {
  d.metadata.annotations.Erase(std::string(util::kRollbackToAnnotation));
  Result<api::json::Value> tmpl = d.spec.pod_template.ToJson();
  if (!tmpl.ok()) return tmpl.error();
  const std::string raw = d.raw_json.str();
  Result<std::string> body = api::MutateRawJson(raw, [&](api::json::Value& obj) -> Status {
    api::json::Value annotations = api::json::Value::MakeObject();
    for (const auto& [k, v] : d.metadata.annotations) {
      annotations.Set(k, api::json::Value::String(v));
    }
    if (d.metadata.annotations.empty()) {
      api::json::ErasePath(obj, {"metadata", "annotations"});
    } else if (Status s =
                   api::json::SetPath(obj, {"metadata", "annotations"}, std::move(annotations));
               !s.ok()) {
      return s;
    }
    return api::json::SetPath(obj, {"spec", "template"}, *tmpl);
  });
  if (!body.ok()) return body.error();
  auto updated =
      deployments_->Update(d.metadata.namespace_, d.metadata.name, std::move(body).value());
  if (!updated.ok()) return updated.error();
  d = **updated;
  RecordWrite(d, api::kDeployments.GroupResource(), d.metadata.resource_version);
  return OkStatus();
}

void DeploymentController::EmitRollbackWarningEvent(const Deployment& d, std::string_view reason,
                                                    const std::string& message) {
  Eventf(d, "Warning", reason, message);
}

}  // namespace kcm::deployment
