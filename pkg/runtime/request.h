// Request: what a Reconciler is asked to reconcile (controller-runtime's reconcile.Request); the
// answer is a ReconcileResult (reconcile_result.h). Plain data.
#pragma once

#include <string>

namespace kcm::runtime {

struct Request {
  std::string namespace_;  // empty for cluster-scoped objects
  std::string name;

  // "namespace/name", or "name" when cluster-scoped: the workqueue key.
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
  static Request FromKey(const std::string& key);
  friend bool operator==(const Request&, const Request&) = default;
};

}  // namespace kcm::runtime
