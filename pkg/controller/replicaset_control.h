// RSControlInterface: how the Deployment controller patches ReplicaSets when it adopts or releases
// them (spec D2 claiming, like R13). RealRSControl writes through the API server. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/controller/write_fence.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
}

namespace kcm::controller {

class RSControlInterface {
 public:
  virtual ~RSControlInterface() = default;
  // Sends a strategic merge patch to ReplicaSet `name`.
  virtual Status PatchReplicaSet(std::string_view ns, std::string_view name,
                                 const std::string& patch) = 0;
};

class RealRSControl final : public RSControlInterface {
 public:
  // `replicasets` serves apps/v1 replicasets; writes are refused once `fence` is closed.
  explicit RealRSControl(std::shared_ptr<client::ResourceClient> replicasets, WriteFence fence = {})
      : replicasets_(std::move(replicasets)), fence_(std::move(fence)) {}

  Status PatchReplicaSet(std::string_view ns, std::string_view name,
                         const std::string& patch) override;

 private:
  std::shared_ptr<client::ResourceClient> replicasets_;
  WriteFence fence_;
};

}  // namespace kcm::controller
