// The Deployment controller's settings the daemon exposes as flags, with their one default
// (upstream's DeploymentControllerConfiguration and
// RecommendedDefaultDeploymentControllerConfiguration). The flag table, the daemon's Options and
// DeploymentControllerOptions all take it from here.
#pragma once

namespace kcm::deployment {

// --concurrent-deployment-syncs: Deployments synced at once.
inline constexpr int kDefaultConcurrentDeploymentSyncs = 5;

}  // namespace kcm::deployment
