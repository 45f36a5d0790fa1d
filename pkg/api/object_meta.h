// ObjectMeta: the metadata every object carries. Thread-compatible; labels, annotations and owner
// references are immutable shared values (pkg/api/shared_meta.h), replaced whole,
// never edited in place; the timestamps are 8-byte OptionalTimes (pkg/api/optional_time.h).
#pragma once

#include <cstdint>
#include <string>

#include "pkg/api/optional_time.h"
#include "pkg/api/resource_version.h"
#include "pkg/api/shared_meta.h"
#include "pkg/api/uid.h"

namespace kcm::api {

// Not modelled: generateName and finalizers (no controller reads them; the pods we create get
// theirs from the template, and writes of ReplicaSets and Deployments start from their raw JSON,
// which keeps them), deletionGracePeriodSeconds, managedFields. Every cached object carries one
// ObjectMeta, so each field costs its size 60,000 times at 50,000 pods (docs/benchmarks/daemon-at-
// scale.md). The namespace is interned by the decoders (one string per namespace, not one per
// object) and the resourceVersion held as a number (resource_version.h): 48 bytes less per object
// than two std::strings.
struct ObjectMeta {
  std::string name;
  SharedString namespace_;
  Uid uid;  // 16 bytes for canonical UUID text, the text otherwise (uid.h)
  ResourceVersion resource_version;
  int64_t generation = 0;
  OptionalTime creation_timestamp;
  OptionalTime deletion_timestamp;
  Labels labels;
  Annotations annotations;
  OwnerReferences owner_references;

  // The owner reference with controller=true, if any.
  const OwnerReference* ControllerRef() const;
};

}  // namespace kcm::api
