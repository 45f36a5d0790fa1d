#include "cmd/kube-controller-manager/app/component_metrics.h"

#include "cmd/kube-controller-manager/app/upstream_feature_gates.h"
#include "pkg/metrics/metrics.h"

namespace kcm::app {

void RegisterBuildInfo(const BuildInfo& build) {
  // "v1.37.2+cpp.0.1.0" → major "1", minor "37", as upstream's version.Get() splits its own.
  std::string v = build.version.starts_with("v") ? build.version.substr(1) : build.version;
  const size_t dot = v.find('.');
  const std::string major = v.substr(0, dot);
  std::string minor = dot == std::string::npos ? "" : v.substr(dot + 1);
  minor = minor.substr(0, minor.find_first_not_of("0123456789"));
  metrics::GaugeVec("kubernetes_build_info",
                    "[BETA] A metric with a constant '1' value labeled by major, minor, git "
                    "version, git commit, git tree state, build date, Go version, and compiler "
                    "from which Kubernetes was built, and platform on which it is running.",
                    {"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date",
                     "go_version", "compiler", "platform"})
      .With({major, minor, build.version, build.commit, "", "", "", build.compiler, "linux/amd64"})
      .Set(1);
}

void RecordFeatureInfo(const features::FeatureGate& gates) {
  const metrics::GaugeVec enabled(
      "kubernetes_feature_enabled",
      "[BETA] This metric records the data about the stage and enablement of a k8s feature.",
      {"name", "stage"});
  for (const features::UpstreamGate& gate : features::UpstreamGates()) {
    enabled.With({std::string(gate.name), std::string(gate.stage)})
        .Set(gates.Enabled(gate.name) ? 1 : 0);
  }
}

}  // namespace kcm::app
