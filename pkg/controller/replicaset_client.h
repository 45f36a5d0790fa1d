// ReplicaSetClient: every API call either controller makes on ReplicaSets that does not go through
// the informer cache — the one write seam for the resource (our counterpart of client-go's typed
// ReplicaSetInterface, narrowed to the calls the controllers make). The Deployment controller
// creates, scales, annotates, deletes and adopts ReplicaSets; the ReplicaSet controller writes
// their status and re-reads them uncached (canAdopt, the re-read before a status retry). Bodies are
// full objects built from the objects' raw JSON, so fields we do not model survive every write;
// answers are decoded into the typed object. Tests use controller::testing::FakeReplicaSetClient.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pkg/api/replicaset.h"
#include "pkg/controller/write_fence.h"
#include "pkg/util/result.h"

namespace kcm::client {
class ResourceClient;
class RestClient;
}  // namespace kcm::client

namespace kcm::controller {

using ReplicaSetPtr = std::shared_ptr<const api::ReplicaSet>;

class ReplicaSetClient {
 public:
  virtual ~ReplicaSetClient() = default;
  // GET from the API server (not the cache).
  virtual Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) = 0;
  virtual Result<ReplicaSetPtr> Create(std::string_view ns, std::string body) = 0;
  // PUT of the whole ReplicaSet (scale and annotations; resourceVersion-checked).
  virtual Result<ReplicaSetPtr> Update(std::string_view ns, std::string_view name,
                                       std::string body) = 0;
  // PUT .../status: `rs` as last read, with `status` in place of its modelled status fields.
  virtual Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                             const api::ReplicaSetStatus& status) = 0;
  // Strategic merge patch (adoption and release; upstream RSControlInterface.PatchReplicaSet).
  virtual Status Patch(std::string_view ns, std::string_view name, const std::string& patch) = 0;
  // DELETE with a UID precondition, so a recreated ReplicaSet of the same name is never deleted.
  virtual Status Delete(std::string_view ns, std::string_view name, std::string_view uid) = 0;
};

// Writes through the API server. Once `fence` is closed every write is refused locally
// ("Canceled") and reads are cancelled (the daemon passes the leader's "leading" token).
// Thread-safe.
class RealReplicaSetClient final : public ReplicaSetClient {
 public:
  RealReplicaSetClient(std::shared_ptr<client::RestClient> client, WriteFence fence = {});
  ~RealReplicaSetClient() override;

  Result<ReplicaSetPtr> Get(std::string_view ns, std::string_view name) override;
  Result<ReplicaSetPtr> Create(std::string_view ns, std::string body) override;
  Result<ReplicaSetPtr> Update(std::string_view ns, std::string_view name,
                               std::string body) override;
  Result<ReplicaSetPtr> UpdateStatus(const api::ReplicaSet& rs,
                                     const api::ReplicaSetStatus& status) override;
  Status Patch(std::string_view ns, std::string_view name, const std::string& patch) override;
  Status Delete(std::string_view ns, std::string_view name, std::string_view uid) override;

 private:
  std::shared_ptr<client::ResourceClient> replicasets_;
  WriteFence fence_;
};

// Decodes a server answer (a per-thread decoder; safe from any thread).
Result<ReplicaSetPtr> DecodeReplicaSetBody(const std::string& body);

}  // namespace kcm::controller
