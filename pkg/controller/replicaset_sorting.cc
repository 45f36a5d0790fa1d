#include "pkg/controller/replicaset_sorting.h"

#include <charconv>
#include <string>

namespace kcm::controller {

Result<int64_t> Revision(const api::ObjectMeta& meta) {
  auto it = meta.annotations.find(std::string(kRevisionAnnotation));
  if (it == meta.annotations.end()) return int64_t{0};
  const std::string& text = it->second;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Error::Local("InvalidArgument",
                        "invalid revision " + text + " on " + meta.namespace_ + "/" + meta.name);
  }
  return value;
}

bool ReplicaSetsByCreationTimestamp::operator()(const ReplicaSetPtr& a,
                                                const ReplicaSetPtr& b) const {
  const auto& ta = a->metadata.creation_timestamp;
  const auto& tb = b->metadata.creation_timestamp;
  if (ta == tb) return a->metadata.name < b->metadata.name;
  return ta < tb;  // nullopt < any time: missing sorts oldest, like Go's zero time
}

bool ReplicaSetsBySizeOlder::operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const {
  if (a->spec.replicas == b->spec.replicas) return ReplicaSetsByCreationTimestamp()(a, b);
  return a->spec.replicas > b->spec.replicas;
}

bool ReplicaSetsBySizeNewer::operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const {
  if (a->spec.replicas == b->spec.replicas) return ReplicaSetsByCreationTimestamp()(b, a);
  return a->spec.replicas > b->spec.replicas;
}

bool ReplicaSetsByRevision::operator()(const ReplicaSetPtr& a, const ReplicaSetPtr& b) const {
  Result<int64_t> ra = Revision(a->metadata);
  Result<int64_t> rb = Revision(b->metadata);
  if (!ra.ok() || !rb.ok() || *ra == *rb) return ReplicaSetsByCreationTimestamp()(a, b);
  return *ra < *rb;
}

}  // namespace kcm::controller
