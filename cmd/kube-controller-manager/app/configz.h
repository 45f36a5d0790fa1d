// The effective configuration /configz shows, in upstream's shape: a
// kubecontrollermanager.config.k8s.io/v1alpha1 KubeControllerManagerConfiguration (upstream
// Run's configz.New(ConfigzName) + Set), whose sections and field names are upstream's
// (Go field names where its v1alpha1 types have no JSON tags, "Generic", "LeaderElection"; the
// tagged component-base parts in camelCase). Only what this binary honours is filled in: the
// Generic section, KubeCloudShared's UseServiceAccountCredentials and the Deployment and
// ReplicaSet controllers' sections; the sections and fields of controllers it does not run are
// left out rather than reported with values nobody applies. Compared with upstream v1.37.2's
// answer: the same names, order and value formats for every field present.
#pragma once

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/api/json.h"

namespace kcm::app {

// upstream's ConfigzName, the key of the configuration in /configz.
inline constexpr const char* kConfigzName = "kubecontrollermanager.config.k8s.io";

api::json::Value KubeControllerManagerConfiguration(const Options& options);

}  // namespace kcm::app
