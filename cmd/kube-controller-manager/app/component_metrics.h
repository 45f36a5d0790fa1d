// The component-base metrics (M6) every upstream component serves and operators' dashboards read:
// kubernetes_build_info (upstream component-base metrics.RegisterBuildInfo) and
// kubernetes_feature_enabled, one series per feature gate of upstream v1.37.2 (its
// featureGate.AddMetrics), with upstream's names, labels, help and [BETA] stability marks.
// Called once at start; the metrics live in the process-wide registry.
#pragma once

#include "cmd/kube-controller-manager/app/features.h"
#include "cmd/kube-controller-manager/app/run.h"

namespace kcm::app {

// major/minor/git_version from build.version ("v1.37.2+cpp.0.1.0"); go_version, build_date and
// git_tree_state empty (no Go toolchain or build stamp here); compiler ours; platform
// linux/amd64.
void RegisterBuildInfo(const BuildInfo& build);

// 1 for a gate that is on (its default unless --feature-gates set it), 0 otherwise; stage as
// upstream spells it ("" for GA).
void RecordFeatureInfo(const features::FeatureGate& gates);

}  // namespace kcm::app
