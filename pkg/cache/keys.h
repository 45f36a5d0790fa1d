// Cache keys: "namespace/name" (or "name" for cluster-scoped objects) and the tombstone a DeltaFIFO
// emits when a deletion was missed. Pure functions and immutable values; safe from any thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::cache {

// Computes the store key of an object. Must be a pure function of the object.
using KeyFunc = std::function<std::string(const api::Object&)>;

// DeletedFinalStateUnknown is the tombstone a DeltaFIFO queues when a relist shows that an object
// vanished while the watch was down: the deletion happened, but the object's final state is
// unknown. It is an api::Object so that it travels through Deltas and OnDelete like any object;
// handlers detect it with AsTombstone(). Meta() forwards to the last known object (empty metadata
// if none was known), so code that only needs namespace/name/labels keeps working on a tombstone.
class DeletedFinalStateUnknown final : public api::Object {
 public:
  static constexpr std::string_view kKind = "DeletedFinalStateUnknown";

  DeletedFinalStateUnknown(std::string key, api::ObjectPtr obj)
      : key_(std::move(key)), obj_(std::move(obj)) {}

  std::string_view Kind() const override { return kKind; }
  const api::ObjectMeta& Meta() const override { return obj_ ? obj_->Meta() : empty_meta_; }

  // The key under which the object was stored.
  const std::string& Key() const { return key_; }
  // The last known state of the object; may be null.
  const api::ObjectPtr& Obj() const { return obj_; }

 private:
  std::string key_;
  api::ObjectPtr obj_;
  api::ObjectMeta empty_meta_;
};

// Returns the tombstone if obj is one, else nullptr.
const DeletedFinalStateUnknown* AsTombstone(const api::Object& obj);

// "namespace/name", or "name" when the namespace is empty (behaviour 5.1).
std::string MetaNamespaceKeyFunc(const api::Object& obj);

// Like MetaNamespaceKeyFunc, but a tombstone keys by the key it was stored under (behaviour 5.1).
std::string DeletionHandlingMetaNamespaceKeyFunc(const api::Object& obj);

// Splits a key into {namespace, name}. Errors on more than one '/' or an empty part.
Result<std::pair<std::string, std::string>> SplitMetaNamespaceKey(std::string_view key);

}  // namespace kcm::cache
