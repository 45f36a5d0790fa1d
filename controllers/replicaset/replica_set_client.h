// ReplicaSetClient: the two uncached calls the ReplicaSet controller makes on ReplicaSets — a GET
// (canAdopt, R13, and the re-read before a status retry, R14) and the status write. The real one
// writes a PUT of the object's own raw JSON with the new status, so fields we do not model and
// the resourceVersion (optimistic concurrency) are kept (decision 1). Thread-safe.
#pragma once

#include <memory>
#include <string_view>

#include "pkg/api/replicaset.h"
#include "pkg/controller/write_fence.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
}

namespace kcm::replicaset {

using ReplicaSetPtr = std::shared_ptr<const api::ReplicaSet>;

class ReplicaSetClient {
 public:
  virtual ~ReplicaSetClient() = default;
  // GET from the API server (not the cache).
  virtual Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) = 0;
  // PUT .../status: `rs` as last read, with `status` in place of its modelled status fields.
  // Returns the object the server stored.
  virtual Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                             const api::ReplicaSetStatus& status) = 0;
};

class RealReplicaSetClient final : public ReplicaSetClient {
 public:
  // `replicasets` serves apps/v1 replicasets. Once `fence` is closed the status write is refused
  // locally and reads are cancelled (the daemon passes the leader's "leading" token).
  explicit RealReplicaSetClient(std::shared_ptr<client::ResourceClient> replicasets,
                                controller::WriteFence fence = {})
      : replicasets_(std::move(replicasets)), fence_(std::move(fence)) {}

  Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) override;
  Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                     const api::ReplicaSetStatus& status) override;

 private:
  std::shared_ptr<client::ResourceClient> replicasets_;
  controller::WriteFence fence_;
};

}  // namespace kcm::replicaset
