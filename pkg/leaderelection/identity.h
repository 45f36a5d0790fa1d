// Candidate identity for leader election: "<hostname>_<uuid v4>" as kube-controller-manager
// builds it (L2). Thread-safe.
#pragma once

#include <string>

#include "pkg/util/result.h"

namespace kcm::leaderelection {

// A random (version 4) UUID in the canonical 8-4-4-4-12 lower-case hex form.
std::string NewUUID();

// "<hostname>_<NewUUID()>"; fails only if the host name cannot be read.
Result<std::string> NewIdentity();

}  // namespace kcm::leaderelection
