#include "pkg/controller/typed_client.h"

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object_builders.h"

namespace kcm::controller {

Result<std::shared_ptr<const api::ReplicaSet>> ResourceTraits<api::ReplicaSet>::Decode(
    api::Decoder& decoder, api::JsonInput json) {
  return api::DecodeReplicaSet(decoder, json);
}

Result<std::string> ResourceTraits<api::ReplicaSet>::EncodeStatus(
    const api::ReplicaSet& rs, const api::ReplicaSetStatus& status) {
  return api::EncodeReplicaSetStatus(rs, status);
}

Result<std::shared_ptr<const api::Deployment>> ResourceTraits<api::Deployment>::Decode(
    api::Decoder& decoder, api::JsonInput json) {
  return api::DecodeDeployment(decoder, json);
}

Result<std::string> ResourceTraits<api::Deployment>::EncodeStatus(
    const api::Deployment& d, const api::DeploymentStatus& status) {
  Result<std::string> with_annotations =
      api::ReplaceAnnotations(d.raw_json.str(), d.metadata.annotations);
  if (!with_annotations.ok()) return with_annotations.error();
  return api::EncodeDeploymentStatus(*with_annotations, status);
}

template <typename T>
Result<std::shared_ptr<const T>> DecodeBody(const std::string& body) {
  // One decoder per worker thread: decoders are not thread-safe and cost an allocation to build.
  thread_local api::Decoder decoder = [] {
    api::Decoder d;
    d.set_pack_raw_json(false);
    return d;
  }();
  return ResourceTraits<T>::Decode(decoder, api::JsonInput::FromString(body));
}

template <typename T>
RestTypedClient<T>::RestTypedClient(std::shared_ptr<client::RestClient> client,
                                    std::stop_token cancel)
    : resources_(std::move(client), ResourceTraits<T>::kResource), cancel_(std::move(cancel)) {}

template <typename T>
auto RestTypedClient<T>::Get(std::string_view ns, std::string_view name) -> Result<Ptr> {
  auto body = resources_.Get(ns, name, {}, cancel_);
  if (!body.ok()) return body.error();
  return DecodeBody<T>(*body);
}

template <typename T>
auto RestTypedClient<T>::Create(std::string_view ns, std::string body) -> Result<Ptr> {
  auto out = resources_.Create(ns, std::move(body), {}, cancel_);
  if (!out.ok()) return out.error();
  return DecodeBody<T>(*out);
}

template <typename T>
auto RestTypedClient<T>::Update(std::string_view ns, std::string_view name, std::string body)
    -> Result<Ptr> {
  auto out = resources_.Update(ns, name, std::move(body), {}, cancel_);
  if (!out.ok()) return out.error();
  return DecodeBody<T>(*out);
}

template <typename T>
auto RestTypedClient<T>::UpdateStatus(const T& obj, const StatusType& status) -> Result<Ptr> {
  Result<std::string> body = ResourceTraits<T>::EncodeStatus(obj, status);
  if (!body.ok()) return body.error();
  auto out = resources_.UpdateStatus(obj.metadata.namespace_, obj.metadata.name,
                                     std::move(body).value(), {}, cancel_);
  if (!out.ok()) return out.error();
  return DecodeBody<T>(*out);
}

template <typename T>
Status RestTypedClient<T>::Patch(std::string_view ns, std::string_view name,
                                 const std::string& patch) {
  auto out =
      resources_.Patch(ns, name, client::PatchType::kStrategicMergePatch, patch, {}, "", cancel_);
  if (!out.ok()) return out.error();
  return OkStatus();
}

template <typename T>
Status RestTypedClient<T>::Delete(std::string_view ns, std::string_view name,
                                  std::string_view uid) {
  client::DeleteOptions opts;
  opts.precondition_uid = std::string(uid);
  auto out = resources_.Delete(ns, name, opts, cancel_);
  if (!out.ok()) return out.error();
  return OkStatus();
}

template Result<std::shared_ptr<const api::ReplicaSet>> DecodeBody<api::ReplicaSet>(
    const std::string& body);
template Result<std::shared_ptr<const api::Deployment>> DecodeBody<api::Deployment>(
    const std::string& body);
template class RestTypedClient<api::ReplicaSet>;
template class RestTypedClient<api::Deployment>;

}  // namespace kcm::controller
