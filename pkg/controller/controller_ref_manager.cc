#include "pkg/controller/controller_ref_manager.h"

#include <utility>

#include "pkg/api/object_builders.h"
#include "pkg/api/time.h"
#include "pkg/client/api_errors.h"
#include "pkg/controller/pod_control.h"
#include "pkg/controller/typed_client.h"
#include "pkg/util/klog.h"

namespace kcm::controller {
namespace {

std::string Describe(const api::Object& object) {
  const api::ObjectMeta& meta = object.Meta();
  return std::string(object.Kind()) + " " + meta.namespace_ + "/" + meta.name + " (" +
         meta.uid.str() + ")";
}

}  // namespace

PatchFunc PodPatcher(PodControlInterface& control) {
  return [&control](const api::ObjectMeta& meta, const std::string& patch) {
    return control.PatchPod(meta.namespace_, meta.name, patch);
  };
}

PatchFunc ReplicaSetPatcher(ReplicaSetClient& replicasets) {
  return [&replicasets](const api::ObjectMeta& meta, const std::string& patch) {
    return replicasets.Patch(meta.namespace_, meta.name, patch);
  };
}

CanAdoptFunc RecheckDeletionTimestamp(std::function<Result<api::ObjectMeta>()> get_fresh,
                                      std::string kind, std::string uid) {
  return
      [get_fresh = std::move(get_fresh), kind = std::move(kind), uid = std::move(uid)]() -> Status {
        Result<api::ObjectMeta> fresh = get_fresh();
        if (!fresh.ok()) {
          Error e = fresh.error();
          e.message = "can't recheck DeletionTimestamp: " + e.message;
          return e;
        }
        const std::string name = fresh->namespace_ + "/" + fresh->name;
        if (fresh->uid != uid) {
          return Error::Local("UIDGone", "original " + kind + " " + name + " is gone: got uid " +
                                             fresh->uid.str() + ", wanted " + uid);
        }
        if (fresh->deletion_timestamp) {
          return Error::Local("Deleting", name + " has just been deleted at " +
                                              api::FormatTime(*fresh->deletion_timestamp));
        }
        return OkStatus();
      };
}

ControllerRefManager::ControllerRefManager(const api::ObjectMeta& controller,
                                           std::string api_version, std::string kind,
                                           api::labels::Selector selector, CanAdoptFunc can_adopt)
    : owner_(api::ControllerOwnerReference(std::move(api_version), std::move(kind), controller)),
      namespace_(controller.namespace_),
      deleting_(controller.deletion_timestamp.has_value()),
      selector_(std::move(selector)),
      can_adopt_(std::move(can_adopt)) {}

Status ControllerRefManager::CanAdopt() {
  if (!can_adopt_result_) {
    can_adopt_result_ = can_adopt_ ? can_adopt_() : OkStatus();
  }
  return *can_adopt_result_;
}

Status ControllerRefManager::AdoptObject(const api::Object& object, const PatchFunc& patch) {
  if (Status can = CanAdopt(); !can.ok()) {
    // A fresh reason on purpose: a NotFound from the controller's GET must not read as "the
    // candidate is gone", which ClaimObject would swallow.
    return Error::Local("CannotAdopt",
                        "can't adopt " + Describe(object) + ": " + can.error().message);
  }
  // The API server refuses the patch if another controller ownerReference exists, so a race with
  // another adopter cannot leave two controllers; the uid guards against a recreated object.
  return patch(object.Meta(), api::AdoptOwnerPatch(owner_, object.Meta().uid.str()));
}

Status ControllerRefManager::ReleaseObject(const api::Object& object, const PatchFunc& patch) {
  KLOG_V_INFOS(2, "Patching object to remove its controllerRef", "object", Describe(object),
               "controllerKind", owner_.kind, "controller", klog::KRef(namespace_, owner_.name));
  Status status =
      patch(object.Meta(), api::ReleaseOwnerPatch(owner_.uid.str(), object.Meta().uid.str()));
  if (status.ok()) return status;
  // Gone, or recreated under the same name (the uid precondition answers 422): nothing to release.
  if (errors::IsNotFound(status.error()) || errors::IsInvalid(status.error())) return OkStatus();
  return status;
}

Result<bool> ControllerRefManager::ClaimObject(const api::Object& object, const PatchFunc& patch) {
  const api::ObjectMeta& meta = object.Meta();
  if (const api::OwnerReference* ref = meta.ControllerRef(); ref != nullptr) {
    if (ref->uid != owner_.uid) return false;
    if (Matches(meta)) return true;
    // A controller being deleted keeps what it owns so the garbage collector can find it.
    if (deleting_) return false;
    if (Status s = ReleaseObject(object, patch); !s.ok()) {
      if (errors::IsNotFound(s.error())) return false;
      return s.error();
    }
    return false;
  }
  // An orphan.
  if (deleting_ || !Matches(meta)) return false;
  if (meta.deletion_timestamp) return false;
  if (!namespace_.empty() && namespace_ != meta.namespace_) return false;
  if (Status s = AdoptObject(object, patch); !s.ok()) {
    if (errors::IsNotFound(s.error())) return false;
    return s.error();
  }
  return true;
}

Status ControllerRefManager::Aggregate(std::vector<Error> errors) {
  if (errors.empty()) return OkStatus();
  if (errors.size() == 1) return std::move(errors.front());
  Error combined = errors.front();
  combined.message = "[";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) combined.message += ", ";
    combined.message += errors[i].message;
  }
  combined.message += "]";
  return combined;
}

}  // namespace kcm::controller
