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

namespace kcm::api {

using Time = std::chrono::system_clock::time_point;

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
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
