// DeploymentClient: the API writes (and the one uncached read) the Deployment controller makes,
// behind an interface so unit tests can record them (Envoy-style seam). Bodies are full objects
// built from the objects' raw JSON (decision 1); answers are decoded into the typed objects.
// RealDeploymentClient is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/deployment.h"
#include "pkg/api/replicaset.h"
#include "pkg/client/rest_client.h"
#include "pkg/controller/replicaset_control.h"
#include "pkg/controller/write_fence.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
}

namespace kcm::deployment {

using DeploymentPtr = std::shared_ptr<const api::Deployment>;
using ReplicaSetPtr = std::shared_ptr<const api::ReplicaSet>;

class DeploymentClient : public controller::RSControlInterface {
 public:
  // Uncached GET (the canAdopt recheck before adopting ReplicaSets).
  virtual Result<DeploymentPtr> GetDeployment(std::string_view ns, std::string_view name) = 0;
  // PUT of the whole Deployment (rollback: template and annotations).
  virtual Result<DeploymentPtr> UpdateDeployment(std::string_view ns, std::string_view name,
                                                 std::string body) = 0;
  // PUT .../status (status and, as the API server's status strategy allows, annotations).
  virtual Result<DeploymentPtr> UpdateDeploymentStatus(std::string_view ns, std::string_view name,
                                                       std::string body) = 0;
  virtual Result<ReplicaSetPtr> CreateReplicaSet(std::string_view ns, std::string body) = 0;
  // PUT of the whole ReplicaSet (scale + annotations, resourceVersion-checked).
  virtual Result<ReplicaSetPtr> UpdateReplicaSet(std::string_view ns, std::string_view name,
                                                 std::string body) = 0;
  // DELETE with a UID precondition, so a recreated ReplicaSet of the same name is never deleted.
  virtual Status DeleteReplicaSet(std::string_view ns, std::string_view name,
                                  std::string_view uid) = 0;
};

class RealDeploymentClient final : public DeploymentClient {
 public:
  // Once `fence` is closed every write is refused locally ("Canceled") and the uncached GET is
  // cancelled (the daemon passes the leader's "leading" token).
  explicit RealDeploymentClient(std::shared_ptr<client::RestClient> client,
                                controller::WriteFence fence = {});
  ~RealDeploymentClient() override;

  Result<DeploymentPtr> GetDeployment(std::string_view ns, std::string_view name) override;
  Result<DeploymentPtr> UpdateDeployment(std::string_view ns, std::string_view name,
                                         std::string body) override;
  Result<DeploymentPtr> UpdateDeploymentStatus(std::string_view ns, std::string_view name,
                                               std::string body) override;
  Result<ReplicaSetPtr> CreateReplicaSet(std::string_view ns, std::string body) override;
  Result<ReplicaSetPtr> UpdateReplicaSet(std::string_view ns, std::string_view name,
                                         std::string body) override;
  Status DeleteReplicaSet(std::string_view ns, std::string_view name,
                          std::string_view uid) override;
  Status PatchReplicaSet(std::string_view ns, std::string_view name,
                         const std::string& patch) override;

 private:
  std::shared_ptr<client::ResourceClient> deployments_;
  std::shared_ptr<client::ResourceClient> replicasets_;
  controller::WriteFence fence_;
};

// Decodes a server answer (a thread-local decoder; safe from any thread).
Result<DeploymentPtr> DecodeDeploymentBody(const std::string& body);
Result<ReplicaSetPtr> DecodeReplicaSetBody(const std::string& body);

}  // namespace kcm::deployment
