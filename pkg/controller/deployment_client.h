// DeploymentClient: the API calls the Deployment controller makes on Deployments that do not go
// through the informer cache — the one write seam for the resource (our counterpart of client-go's
// typed DeploymentInterface, narrowed to the calls the controller makes). Bodies are full objects
// built from the objects' raw JSON; answers are decoded into the typed object. Tests use
// controller::testing::FakeDeploymentClient.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/deployment.h"
#include "pkg/controller/write_fence.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
class RestClient;
}  // namespace kcm::client

namespace kcm::controller {

using DeploymentPtr = std::shared_ptr<const api::Deployment>;

class DeploymentClient {
 public:
  virtual ~DeploymentClient() = default;
  // GET from the API server (the canAdopt recheck before adopting ReplicaSets).
  virtual Result<DeploymentPtr> Get(std::string_view ns, std::string_view name) = 0;
  // PUT of the whole Deployment (rollback: template and annotations).
  virtual Result<DeploymentPtr> Update(std::string_view ns, std::string_view name,
                                       std::string body) = 0;
  // PUT .../status (status and, as the API server's status strategy allows, annotations).
  virtual Result<DeploymentPtr> UpdateStatus(std::string_view ns, std::string_view name,
                                             std::string body) = 0;
};

// Writes through the API server. Once `fence` is closed every write is refused locally
// ("Canceled") and reads are cancelled. Thread-safe.
class RealDeploymentClient final : public DeploymentClient {
 public:
  RealDeploymentClient(std::shared_ptr<client::RestClient> client, WriteFence fence = {});
  ~RealDeploymentClient() override;

  Result<DeploymentPtr> Get(std::string_view ns, std::string_view name) override;
  Result<DeploymentPtr> Update(std::string_view ns, std::string_view name,
                               std::string body) override;
  Result<DeploymentPtr> UpdateStatus(std::string_view ns, std::string_view name,
                                     std::string body) override;

 private:
  std::shared_ptr<client::ResourceClient> deployments_;
  WriteFence fence_;
};

// Decodes a server answer (a per-thread decoder; safe from any thread).
Result<DeploymentPtr> DecodeDeploymentBody(const std::string& body);

}  // namespace kcm::controller
