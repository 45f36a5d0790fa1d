// ObjectMeta: the metadata every object carries. Thread-compatible; labels and owner references
// are immutable shared values (pkg/api/shared_meta.h), replaced whole, never edited in place.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/shared_meta.h"
#include "pkg/api/uid.h"

namespace kcm::api {

using Time = std::chrono::system_clock::time_point;

// Not modelled: generateName (no controller reads it; the pods we create get theirs from the
// template, and writes of ReplicaSets and Deployments start from their raw JSON, which keeps it),
// deletionGracePeriodSeconds, managedFields. Every cached object carries one ObjectMeta, so each
// field costs its size 60,000 times at 50,000 pods (docs/benchmarks.md, "Daemon at scale").
struct ObjectMeta {
  std::string name;
  std::string namespace_;
  Uid uid;  // 16 bytes for canonical UUID text, the text otherwise (uid.h)
  std::string resource_version;
  int64_t generation = 0;
  std::optional<Time> creation_timestamp;
  std::optional<Time> deletion_timestamp;
  Labels labels;
  std::map<std::string, std::string> annotations;
  OwnerReferences owner_references;
  std::vector<std::string> finalizers;

  // The owner reference with controller=true, if any.
  const OwnerReference* ControllerRef() const;
};

}  // namespace kcm::api
