// --feature-gates (upstream component-base featuregate, names from pkg/features/kube_features.go):
// "Name=true,Other=false". Only gates this binary knows are accepted; an unknown name or a value
// that is not a bool is an error, as upstream. Plain data; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::app::features {

// ReplicaSet syncs wait until the informers have applied the controller's own last writes
// (ConsistencyStore). Beta, on by default since v1.36.
inline constexpr std::string_view kStaleControllerConsistencyReplicaSet =
    "StaleControllerConsistencyReplicaSet";

// /flagz and /statusz are served (component-base zpages/features). Beta, on by default since
// v1.36.
inline constexpr std::string_view kComponentFlagz = "ComponentFlagz";
inline constexpr std::string_view kComponentStatusz = "ComponentStatusz";

struct GateSpec {
  std::string_view name;
  bool default_value;
  std::string_view stage;  // "ALPHA", "BETA", "GA"
  // Accepted for compatibility with upstream flag lines; the controller it governs is not in
  // this binary, so it changes nothing here.
  bool no_effect = false;
};

// The gates this binary knows, sorted by name.
const std::vector<GateSpec>& KnownGates();

class FeatureGate {
 public:
  // Every known gate at its default.
  FeatureGate() = default;

  // Applies "Name=bool,..." (spaces around entries allowed, empty entries ignored). On error
  // nothing is changed.
  Status Set(std::string_view value);
  // The gate's value: as set, else its default (upstream's for a gate that changes nothing
  // here); false for an unknown name.
  bool Enabled(std::string_view name) const;
  // The explicitly set gates as "A=true,B=false" (sorted), for logging the effective flags.
  std::string String() const;

 private:
  std::map<std::string, bool, std::less<>> overrides_;
};

}  // namespace kcm::app::features
