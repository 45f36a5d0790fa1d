#include "controllers/deployment/deployment_client.h"

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/client/resource_client.h"

namespace kcm::deployment {

namespace {
std::string Describe(std::string_view verb, std::string_view ns, std::string_view name) {
  std::string out = std::string(verb) + " " + std::string(ns);
  if (!name.empty()) out += "/" + std::string(name);
  return out;
}

api::Decoder& ThreadDecoder() {
  thread_local api::Decoder decoder;
  return decoder;
}
}  // namespace

Result<DeploymentPtr> DecodeDeploymentBody(const std::string& body) {
  auto d = api::DecodeDeployment(ThreadDecoder(), api::JsonInput::FromString(body));
  if (!d.ok()) return d.error();
  return DeploymentPtr(std::move(d).value());
}

Result<ReplicaSetPtr> DecodeReplicaSetBody(const std::string& body) {
  auto rs = api::DecodeReplicaSet(ThreadDecoder(), api::JsonInput::FromString(body));
  if (!rs.ok()) return rs.error();
  return ReplicaSetPtr(std::move(rs).value());
}

RealDeploymentClient::RealDeploymentClient(std::shared_ptr<client::RestClient> client,
                                           controller::WriteFence fence)
    : deployments_(std::make_shared<client::ResourceClient>(
          client, client::GroupVersionResource{"apps", "v1", "deployments"}, true)),
      replicasets_(std::make_shared<client::ResourceClient>(
          client, client::GroupVersionResource{"apps", "v1", "replicasets"}, true)),
      fence_(std::move(fence)) {}

RealDeploymentClient::~RealDeploymentClient() = default;

Result<DeploymentPtr> RealDeploymentClient::GetDeployment(std::string_view ns,
                                                          std::string_view name) {
  auto body = deployments_->Get(ns, name, {}, fence_.token());
  if (!body.ok()) return body.error();
  return DecodeDeploymentBody(*body);
}

Result<DeploymentPtr> RealDeploymentClient::UpdateDeployment(std::string_view ns,
                                                             std::string_view name,
                                                             std::string body) {
  if (Status f = fence_.Check(Describe("update deployment", ns, name)); !f.ok()) return f.error();
  auto out = deployments_->Update(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeDeploymentBody(*out);
}

Result<DeploymentPtr> RealDeploymentClient::UpdateDeploymentStatus(std::string_view ns,
                                                                   std::string_view name,
                                                                   std::string body) {
  if (Status f = fence_.Check(Describe("update status of deployment", ns, name)); !f.ok()) {
    return f.error();
  }
  auto out = deployments_->UpdateStatus(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeDeploymentBody(*out);
}

Result<ReplicaSetPtr> RealDeploymentClient::CreateReplicaSet(std::string_view ns,
                                                             std::string body) {
  if (Status f = fence_.Check(Describe("create replicaset in", ns, "")); !f.ok()) return f.error();
  auto out = replicasets_->Create(ns, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeReplicaSetBody(*out);
}

Result<ReplicaSetPtr> RealDeploymentClient::UpdateReplicaSet(std::string_view ns,
                                                             std::string_view name,
                                                             std::string body) {
  if (Status f = fence_.Check(Describe("update replicaset", ns, name)); !f.ok()) return f.error();
  auto out = replicasets_->Update(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeReplicaSetBody(*out);
}

Status RealDeploymentClient::DeleteReplicaSet(std::string_view ns, std::string_view name,
                                              std::string_view uid) {
  client::DeleteOptions opts;
  opts.precondition_uid = std::string(uid);
  if (Status f = fence_.Check(Describe("delete replicaset", ns, name)); !f.ok()) return f;
  auto out = replicasets_->Delete(ns, name, opts, fence_.token());
  if (!out.ok()) return out.error();
  return OkStatus();
}

Status RealDeploymentClient::PatchReplicaSet(std::string_view ns, std::string_view name,
                                             const std::string& patch) {
  if (Status f = fence_.Check(Describe("patch replicaset", ns, name)); !f.ok()) return f;
  auto out = replicasets_->Patch(ns, name, client::PatchType::kStrategicMergePatch, patch, {}, "",
                                 fence_.token());
  if (!out.ok()) return out.error();
  return OkStatus();
}

}  // namespace kcm::deployment
