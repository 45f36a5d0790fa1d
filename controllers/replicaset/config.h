// The ReplicaSet controller's settings the daemon exposes as flags, with their one default
// (upstream's ReplicaSetControllerConfiguration and
// RecommendedDefaultReplicaSetControllerConfiguration). The flag table, the daemon's Options and
// ReplicaSetControllerOptions all take it from here.
#pragma once

namespace kcm::replicaset {

// --concurrent-replicaset-syncs: ReplicaSets synced at once.
inline constexpr int kDefaultConcurrentReplicaSetSyncs = 5;

}  // namespace kcm::replicaset
