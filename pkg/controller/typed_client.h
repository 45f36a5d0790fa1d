// TypedClient<T>: the API calls a controller makes on one resource outside the informer cache,
// the one write seam per resource (our counterpart of client-go's typed clients, e.g.
// ReplicaSetInterface, narrowed to the calls the controllers make). Bodies are full objects built
// from the objects' raw JSON, so fields we do not model survive every write; answers are decoded
// into the typed object. RestTypedClient talks to the API server; FencedTypedClient
// (fenced_client.h) refuses writes once the leader's token is cancelled;
// controller::testing::FakeTypedClient records calls for unit tests. Thread-safe.
#pragma once

#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/api/deployment.h"
#include "pkg/api/replicaset.h"
#include "pkg/api/resource.h"
#include "pkg/client/resource_client.h"
#include "pkg/util/result.h"

namespace kcm::api {
class Decoder;
struct JsonInput;
}  // namespace kcm::api

namespace kcm::controller {

// What the template needs to know of a resource; specialised below for the two the controllers
// write.
template <typename T>
struct ResourceTraits;

template <>
struct ResourceTraits<api::ReplicaSet> {
  using StatusType = api::ReplicaSetStatus;
  static constexpr const api::Resource& kResource = api::kReplicaSets;
  static Result<std::shared_ptr<const api::ReplicaSet>> Decode(api::Decoder& decoder,
                                                               api::JsonInput json);
  // The body of PUT .../status: `rs` as last read with `status` in place of its modelled status.
  static Result<std::string> EncodeStatus(const api::ReplicaSet& rs,
                                          const api::ReplicaSetStatus& status);
};

template <>
struct ResourceTraits<api::Deployment> {
  using StatusType = api::DeploymentStatus;
  static constexpr const api::Resource& kResource = api::kDeployments;
  static Result<std::shared_ptr<const api::Deployment>> Decode(api::Decoder& decoder,
                                                               api::JsonInput json);
  // The body of PUT .../status: `d` as last read with its metadata.annotations and `status`
  // (the API server's status strategy keeps annotation changes on the status subresource).
  static Result<std::string> EncodeStatus(const api::Deployment& d,
                                          const api::DeploymentStatus& status);
};

template <typename T>
class TypedClient {
 public:
  using Ptr = std::shared_ptr<const T>;
  using StatusType = typename ResourceTraits<T>::StatusType;

  virtual ~TypedClient() = default;
  // GET from the API server (not the cache): canAdopt rechecks, the re-read before a retry.
  virtual Result<Ptr> Get(std::string_view ns, std::string_view name) = 0;
  virtual Result<Ptr> Create(std::string_view ns, std::string body) = 0;
  // PUT of the whole object (resourceVersion-checked).
  virtual Result<Ptr> Update(std::string_view ns, std::string_view name, std::string body) = 0;
  // PUT .../status of `obj` as last read, with `status` (ResourceTraits<T>::EncodeStatus).
  virtual Result<Ptr> UpdateStatus(const T& obj, const StatusType& status) = 0;
  // Strategic merge patch (adoption and release; upstream RSControlInterface.PatchReplicaSet).
  virtual Status Patch(std::string_view ns, std::string_view name, const std::string& patch) = 0;
  // DELETE with a UID precondition, so a recreated object of the same name is never deleted.
  virtual Status Delete(std::string_view ns, std::string_view name, std::string_view uid) = 0;
};

using ReplicaSetClient = TypedClient<api::ReplicaSet>;
using DeploymentClient = TypedClient<api::Deployment>;
using ReplicaSetPtr = ReplicaSetClient::Ptr;
using DeploymentPtr = DeploymentClient::Ptr;

// Calls the API server. `cancel` ends a wait in the client's rate limiter and a request in flight
// (the daemon passes the leader's "leading" token). Instantiated for ReplicaSet and Deployment.
template <typename T>
class RestTypedClient final : public TypedClient<T> {
 public:
  using typename TypedClient<T>::Ptr;
  using typename TypedClient<T>::StatusType;

  explicit RestTypedClient(std::shared_ptr<client::RestClient> client, std::stop_token cancel = {});

  Result<Ptr> Get(std::string_view ns, std::string_view name) override;
  Result<Ptr> Create(std::string_view ns, std::string body) override;
  Result<Ptr> Update(std::string_view ns, std::string_view name, std::string body) override;
  Result<Ptr> UpdateStatus(const T& obj, const StatusType& status) override;
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override;
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override;

 private:
  client::ResourceClient resources_;
  std::stop_token cancel_;
};

// Decodes a server answer (a per-thread decoder; safe from any thread). The answer is used by
// one sync and dropped (the informer caches its own copy): not packed.
template <typename T>
Result<std::shared_ptr<const T>> DecodeBody(const std::string& body);

extern template class RestTypedClient<api::ReplicaSet>;
extern template class RestTypedClient<api::Deployment>;

}  // namespace kcm::controller
