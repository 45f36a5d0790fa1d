// Controller-ref manager (R13, D2): a controller claims the objects it should own — keeps
// its own, adopts matching orphans, releases its own that stopped matching — by patching their
// ownerReferences. One manager per sync, used from that sync's thread only (thread-compatible).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/api/object.h"
#include "pkg/api/object_meta.h"
#include "pkg/controller/typed_client.h"
#include "pkg/util/result.h"

namespace kcm::controller {

class PodControlInterface;

// The uncached check that the controller still exists and is not being deleted, run once before
// the first adoption (adopting for a controller that is going away would orphan the object again).
using CanAdoptFunc = std::function<Status()>;

// Sends a strategic merge patch to one candidate object (PodControlInterface::PatchPod or
// ReplicaSetClient::Patch).
using PatchFunc = std::function<Status(const api::ObjectMeta& object, const std::string& patch)>;

// upstream RecheckDeletionTimestamp plus the UID comparison its callers add: `get_fresh` is an
// uncached GET of the controller (`kind`, e.g. "ReplicaSet", names it in messages); the check
// fails when the GET fails, the UID is not `uid` (deleted and recreated), or it is being deleted.
CanAdoptFunc RecheckDeletionTimestamp(std::function<Result<api::ObjectMeta>()> get_fresh,
                                      std::string kind, std::string uid);

// PatchFuncs for the two kinds the controllers claim (the control must outlive the function).
PatchFunc PodPatcher(PodControlInterface& control);
PatchFunc ReplicaSetPatcher(ReplicaSetClient& replicasets);

template <typename T>
struct ClaimResult {
  std::vector<std::shared_ptr<const T>> claimed;  // owned by the controller after the call
  Status status;                                  // every adopt/release failure, aggregated
};

// upstream BaseControllerRefManager: the controller's identity, its selector and the canAdopt
// check (memoized: it runs at most once per manager).
class ControllerRefManager {
 public:
  // `controller` is the claiming object's metadata (uid, name, namespace, deletionTimestamp are
  // read); api_version/kind name it in the ownerReference ("apps/v1", "ReplicaSet").
  ControllerRefManager(const api::ObjectMeta& controller, std::string api_version, std::string kind,
                       api::labels::Selector selector, CanAdoptFunc can_adopt);

  // Decides for one object (R13):
  //   owned by another controller                      → not ours, no action
  //   owned by us, selector matches                    → ours (even while we are deleting)
  //   owned by us, no match, we are not deleting       → release; not ours
  //   orphan, match, same namespace, neither deleting  → canAdopt, adopt; ours
  // NotFound on adopt/release means the object is gone: not ours, no error. Release also
  // ignores Invalid (422: the uid precondition failed, the object was recreated).
  Result<bool> ClaimObject(const api::Object& object, const PatchFunc& patch);

  // ClaimObject over a list; failures are aggregated and the other objects still processed.
  template <typename T>
  ClaimResult<T> ClaimObjects(const std::vector<std::shared_ptr<const T>>& objects,
                              const PatchFunc& patch) {
    ClaimResult<T> result;
    std::vector<Error> errors;
    for (const auto& object : objects) {
      Result<bool> claimed = ClaimObject(*object, patch);
      if (!claimed.ok()) {
        errors.push_back(claimed.error());
      } else if (*claimed) {
        result.claimed.push_back(object);
      }
    }
    result.status = Aggregate(std::move(errors));
    return result;
  }

  // Runs the canAdopt check on first use and remembers its answer.
  Status CanAdopt();
  // Adds our controller ownerReference (canAdopt first) / removes it.
  Status AdoptObject(const api::Object& object, const PatchFunc& patch);
  Status ReleaseObject(const api::Object& object, const PatchFunc& patch);

  bool Matches(const api::ObjectMeta& meta) const { return selector_.Matches(meta.labels); }

 private:
  // One error as is; several as one Error with the first one's code and reason and all messages
  // ("[a, b]"), like upstream's utilerrors aggregate.
  static Status Aggregate(std::vector<Error> errors);

  api::OwnerReference owner_;  // the controller ownerReference we add
  std::string namespace_;
  bool deleting_;
  api::labels::Selector selector_;
  CanAdoptFunc can_adopt_;
  std::optional<Status> can_adopt_result_;
};

}  // namespace kcm::controller
