#include "cmd/kube-controller-manager/app/features.h"

#include <algorithm>

#include "cmd/kube-controller-manager/app/upstream_feature_gates.h"
#include "cmd/kube-controller-manager/app/upstream_flags.h"
#include "pkg/util/strings.h"

namespace kcm::app::features {
namespace {

// Names and values are trimmed of spaces only: a tab stays part of a name, which Find then refuses.
std::string_view TrimSpaces(std::string_view s) {
  return Trim(s, " ");
}

const GateSpec* Find(std::string_view name) {
  const auto& gates = KnownGates();
  auto it =
      std::find_if(gates.begin(), gates.end(), [&](const GateSpec& g) { return g.name == name; });
  return it == gates.end() ? nullptr : &*it;
}

// strconv.ParseBool's spellings, which upstream's featuregate accepts.
bool ParseBool(std::string_view v, bool& out) {
  static constexpr std::string_view kTrue[] = {"1", "t", "T", "true", "TRUE", "True"};
  static constexpr std::string_view kFalse[] = {"0", "f", "F", "false", "FALSE", "False"};
  if (std::find(std::begin(kTrue), std::end(kTrue), v) != std::end(kTrue)) {
    out = true;
    return true;
  }
  if (std::find(std::begin(kFalse), std::end(kFalse), v) != std::end(kFalse)) {
    out = false;
    return true;
  }
  return false;
}

// Every gate of upstream's binary is accepted (kubeadm and operators pass them); those not in
// KnownGates() govern nothing this binary runs.
bool IsUpstreamGate(std::string_view name) {
  const auto& all = UpstreamFeatureGates();
  return std::find(all.begin(), all.end(), name) != all.end();
}

}  // namespace

const std::vector<GateSpec>& KnownGates() {
  // Upstream v1.37 defaults. ComponentFlagz and ComponentStatusz (component-base zpages) serve
  // /flagz and /statusz. The DaemonSet/HPA/Job/StatefulSet gates govern controllers this
  // binary does not run; DeploymentReplicaSetTerminatingReplicas is honoured by detecting
  // whether the API server stores status.terminatingReplicas instead.
  static const std::vector<GateSpec> kGates = {
      {kComponentFlagz, true, "BETA", false},
      {kComponentStatusz, true, "BETA", false},
      {"DeploymentReplicaSetTerminatingReplicas", true, "BETA", true},
      {"StaleControllerConsistencyDaemonSet", true, "BETA", true},
      {"StaleControllerConsistencyHPA", true, "BETA", true},
      {"StaleControllerConsistencyJob", true, "BETA", true},
      {kStaleControllerConsistencyReplicaSet, true, "BETA", false},
      {"StaleControllerConsistencyStatefulSet", true, "BETA", true},
  };
  return kGates;
}

Status FeatureGate::Set(std::string_view value) {
  std::map<std::string, bool, std::less<>> next = overrides_;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view entry = TrimSpaces(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (entry.empty()) continue;
    // kubeadm may name the component, "kube:Name=true"; upstream's gates all belong to "kube".
    if (size_t colon = entry.find(':');
        colon != std::string_view::npos && colon < entry.find('=')) {
      if (TrimSpaces(entry.substr(0, colon)) != "kube") {
        return Error::Local("InvalidFlag", "unknown component \"" +
                                               std::string(TrimSpaces(entry.substr(0, colon))) +
                                               "\" in " + std::string(entry));
      }
      entry = TrimSpaces(entry.substr(colon + 1));
    }
    const size_t eq = entry.find('=');
    const std::string_view name = TrimSpaces(entry.substr(0, eq));
    if (eq == std::string_view::npos) {
      return Error::Local("InvalidFlag", "missing bool value for " + std::string(name));
    }
    const std::string_view raw = TrimSpaces(entry.substr(eq + 1));
    if (Find(name) == nullptr && !IsUpstreamGate(name)) {
      return Error::Local("InvalidFlag", "unrecognized feature gate: " + std::string(name));
    }
    bool enabled = false;
    if (!ParseBool(raw, enabled)) {
      return Error::Local("InvalidFlag", "invalid value of " + std::string(name) + "=" +
                                             std::string(raw) + ", err: invalid syntax");
    }
    next[std::string(name)] = enabled;
  }
  overrides_ = std::move(next);
  return OkStatus();
}

bool FeatureGate::Enabled(std::string_view name) const {
  if (auto it = overrides_.find(name); it != overrides_.end()) return it->second;
  if (const GateSpec* spec = Find(name)) return spec->default_value;
  // Gates that govern nothing here still report upstream's default (kubernetes_feature_enabled).
  const auto& upstream = UpstreamGates();
  auto it = std::lower_bound(upstream.begin(), upstream.end(), name,
                             [](const UpstreamGate& g, std::string_view n) { return g.name < n; });
  return it != upstream.end() && it->name == name && it->default_value;
}

std::string FeatureGate::String() const {
  std::string out;
  for (const auto& [name, enabled] : overrides_) {
    out += (out.empty() ? "" : ",") + name + "=" + (enabled ? "true" : "false");
  }
  return out;
}

}  // namespace kcm::app::features
