// Orderings of ReplicaSets the Deployment controller sorts by (upstream controller_utils and
// deployment/util sorters): age, size, revision. Stateless comparators for std::stable_sort;
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "pkg/api/object_meta.h"
#include "pkg/api/replicaset.h"
#include "pkg/util/result.h"

namespace kcm::controller {

using ReplicaSetPtr = std::shared_ptr<const api::ReplicaSet>;

// The annotation holding a ReplicaSet's (and its Deployment's) revision (D5).
inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";

// The revision annotation as an int64; 0 when absent, "Invalid" when not a decimal integer.
Result<int64_t> Revision(const api::ObjectMeta& meta);

// Older first; equal times by name. A missing creationTimestamp sorts as the oldest.
struct ReplicaSetsByCreationTimestamp {
  bool operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const;
};

// Larger spec.replicas first; equal sizes older first.
struct ReplicaSetsBySizeOlder {
  bool operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const;
};

// Larger spec.replicas first; equal sizes newer first.
struct ReplicaSetsBySizeNewer {
  bool operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const;
};

// Lower revision first; equal or unparsable revisions by creation time.
struct ReplicaSetsByRevision {
  bool operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const;
};

}  // namespace kcm::controller
