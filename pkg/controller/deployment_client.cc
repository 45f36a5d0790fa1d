#include "pkg/controller/deployment_client.h"

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/client/resource_client.h"

namespace kcm::controller {
namespace {

std::string Describe(std::string_view verb, std::string_view ns, std::string_view name) {
  return std::string(verb) + " deployment " + std::string(ns) + "/" + std::string(name);
}

}  // namespace

Result<DeploymentPtr> DecodeDeploymentBody(const std::string& body) {
  // One decoder per worker thread: decoders are not thread-safe and cost an allocation to build.
  // The answer is used by one sync and dropped (the informer caches its own copy): not packed.
  thread_local api::Decoder decoder = [] {
    api::Decoder d;
    d.set_pack_raw_json(false);
    return d;
  }();
  auto d = api::DecodeDeployment(decoder, api::JsonInput::FromString(body));
  if (!d.ok()) return d.error();
  return DeploymentPtr(std::move(d).value());
}

RealDeploymentClient::RealDeploymentClient(std::shared_ptr<client::RestClient> client,
                                           WriteFence fence)
    : deployments_(std::make_shared<client::ResourceClient>(
          std::move(client), client::GroupVersionResource{"apps", "v1", "deployments"}, true)),
      fence_(std::move(fence)) {}

RealDeploymentClient::~RealDeploymentClient() = default;

Result<DeploymentPtr> RealDeploymentClient::Get(std::string_view ns, std::string_view name) {
  auto body = deployments_->Get(ns, name, {}, fence_.token());
  if (!body.ok()) return body.error();
  return DecodeDeploymentBody(*body);
}

Result<DeploymentPtr> RealDeploymentClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  if (Status f = fence_.Check(Describe("update", ns, name)); !f.ok()) return f.error();
  auto out = deployments_->Update(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeDeploymentBody(*out);
}

Result<DeploymentPtr> RealDeploymentClient::UpdateStatus(std::string_view ns, std::string_view name,
                                                         std::string body) {
  if (Status f = fence_.Check(Describe("update status of", ns, name)); !f.ok()) return f.error();
  auto out = deployments_->UpdateStatus(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeDeploymentBody(*out);
}

}  // namespace kcm::controller
