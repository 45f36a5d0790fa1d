#include "pkg/controller/replicaset_client.h"

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/resource_client.h"

namespace kcm::controller {
namespace {

std::string Describe(std::string_view verb, std::string_view ns, std::string_view name) {
  std::string out = std::string(verb) + " replicaset " + std::string(ns);
  if (!name.empty()) out += "/" + std::string(name);
  return out;
}

}  // namespace

Result<ReplicaSetPtr> DecodeReplicaSetBody(const std::string& body) {
  // One decoder per worker thread: decoders are not thread-safe and cost an allocation to build.
  // The answer is used by one sync and dropped (the informer caches its own copy): not packed.
  thread_local api::Decoder decoder = [] {
    api::Decoder d;
    d.set_pack_raw_json(false);
    return d;
  }();
  auto rs = api::DecodeReplicaSet(decoder, api::JsonInput::FromString(body));
  if (!rs.ok()) return rs.error();
  return ReplicaSetPtr(std::move(rs).value());
}

RealReplicaSetClient::RealReplicaSetClient(std::shared_ptr<client::RestClient> client,
                                           WriteFence fence)
    : replicasets_(std::make_shared<client::ResourceClient>(
          std::move(client), client::GroupVersionResource{"apps", "v1", "replicasets"}, true)),
      fence_(std::move(fence)) {}

RealReplicaSetClient::~RealReplicaSetClient() = default;

Result<ReplicaSetPtr> RealReplicaSetClient::Get(std::string_view ns, std::string_view name) {
  auto body = replicasets_->Get(ns, name, {}, fence_.token());
  if (!body.ok()) return body.error();
  return DecodeReplicaSetBody(*body);
}

Result<ReplicaSetPtr> RealReplicaSetClient::Create(std::string_view ns, std::string body) {
  if (Status f = fence_.Check(Describe("create", ns, "")); !f.ok()) return f.error();
  auto out = replicasets_->Create(ns, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeReplicaSetBody(*out);
}

Result<ReplicaSetPtr> RealReplicaSetClient::Update(std::string_view ns, std::string_view name,
                                                   std::string body) {
  if (Status f = fence_.Check(Describe("update", ns, name)); !f.ok()) return f.error();
  auto out = replicasets_->Update(ns, name, std::move(body), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeReplicaSetBody(*out);
}

Result<ReplicaSetPtr> RealReplicaSetClient::UpdateStatus(const api::ReplicaSet& rs,
                                                         const api::ReplicaSetStatus& status) {
  Result<std::string> encoded = api::EncodeReplicaSetStatus(rs, status);
  if (!encoded.ok()) return encoded.error();
  const std::string& ns = rs.metadata.namespace_;
  const std::string& name = rs.metadata.name;
  if (Status f = fence_.Check(Describe("update status of", ns, name)); !f.ok()) return f.error();
  auto out = replicasets_->UpdateStatus(ns, name, std::move(*encoded), {}, fence_.token());
  if (!out.ok()) return out.error();
  return DecodeReplicaSetBody(*out);
}

Status RealReplicaSetClient::Patch(std::string_view ns, std::string_view name,
                                   const std::string& patch) {
  if (Status f = fence_.Check(Describe("patch", ns, name)); !f.ok()) return f;
  auto out = replicasets_->Patch(ns, name, client::PatchType::kStrategicMergePatch, patch, {}, "",
                                 fence_.token());
  if (!out.ok()) return out.error();
  return OkStatus();
}

Status RealReplicaSetClient::Delete(std::string_view ns, std::string_view name,
                                    std::string_view uid) {
  if (Status f = fence_.Check(Describe("delete", ns, name)); !f.ok()) return f;
  client::DeleteOptions opts;
  opts.precondition_uid = std::string(uid);
  auto out = replicasets_->Delete(ns, name, opts, fence_.token());
  if (!out.ok()) return out.error();
  return OkStatus();
}

}  // namespace kcm::controller
