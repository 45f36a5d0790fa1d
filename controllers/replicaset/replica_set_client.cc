#include "controllers/replicaset/replica_set_client.h"

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/resource_client.h"

namespace kcm::replicaset {
namespace {

Result<ReplicaSetPtr> Decode(const std::string& body) {
  // One decoder per worker thread: decoders are not thread-safe and cost an allocation to build.
  thread_local api::Decoder decoder;
  return api::DecodeReplicaSet(decoder, api::JsonInput::FromString(body));
}

}  // namespace

Result<ReplicaSetPtr> RealReplicaSetClient::Get(std::string_view ns, std::string_view name) {
  Result<std::string> body = replicasets_->Get(ns, name, {}, fence_.token());
  if (!body.ok()) return body.error();
  return Decode(*body);
}

Result<ReplicaSetPtr> RealReplicaSetClient::UpdateStatus(const api::ReplicaSet& rs,
                                                         const api::ReplicaSetStatus& status) {
  Result<std::string> encoded = api::EncodeReplicaSetStatus(rs, status);
  if (!encoded.ok()) return encoded.error();
  if (Status f = fence_.Check("update status of replicaset " + rs.metadata.namespace_ + "/" +
                              rs.metadata.name);
      !f.ok()) {
    return f.error();
  }
  Result<std::string> body = replicasets_->UpdateStatus(rs.metadata.namespace_, rs.metadata.name,
                                                        std::move(*encoded), {}, fence_.token());
  if (!body.ok()) return body.error();
  return Decode(*body);
}

}  // namespace kcm::replicaset
