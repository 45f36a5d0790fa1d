#include "pkg/sharding/map_lease.h"

#include <utility>

#include "pkg/api/compare_resource_version.h"
#include "pkg/api/generic_object.h"
#include "pkg/util/errors.h"
#include "pkg/util/klog.h"

namespace kcm::sharding {

MapLease::MapLease(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
                   std::string name)
    : leases_(std::move(client), {"coordination.k8s.io", "v1", "leases"}, true),
      namespace_(std::move(lease_namespace)),
      name_(std::move(name)) {}

KnownMap MapLease::Read(std::string_view raw) {
  KnownMap k;
  auto lease = api::DecodeLease(decoder_, raw);
  if (!lease.ok()) {
    k.map = Error::Local("InvalidShardMap", "the Lease does not decode: " + lease.error().message);
    return k;
  }
  k.lease = *lease;
  k.resource_version = k.lease->metadata.resource_version.str();
  const api::Annotations& annotations = k.lease->metadata.annotations;
  auto text = annotations.find(std::string(kShardMapAnnotation));
  k.map = text == annotations.end() ? ShardMap() : ShardMap::Parse(text->second);
  return k;
}

std::optional<KnownMap> MapLease::Latest(cache::Indexer& cached) {
  auto obj = cached.GetByKey(namespace_ + "/" + name_);
  std::optional<KnownMap> seen;
  if (obj != nullptr) seen = Read(static_cast<const api::GenericObject&>(*obj).raw_json);
  if (!written_) return seen;
  // The informer's copy is older than our write only when the two compare and it is lower; a
  // resourceVersion that does not compare (api::CompareResourceVersion) is taken as newer when it
  // differs, so an unusual server cannot pin us to our own write.
  if (!seen || seen->resource_version == written_->resource_version) return written_;
  auto cmp = api::CompareResourceVersion(seen->resource_version, written_->resource_version);
  if (cmp.ok() && *cmp < 0) return written_;
  return seen;
}

Result<KnownMap> MapLease::Get(std::stop_token stop) {
  auto raw = leases_.Get(namespace_, name_, {}, stop);
  if (!raw.ok()) return raw.error();
  return Read(*raw);
}

Status MapLease::Create(std::stop_token stop) {
  api::Lease lease;
  lease.metadata.name = name_;
  lease.metadata.namespace_ = namespace_;
  lease.metadata.annotations.Set(std::string(kShardMapAnnotation), ShardMap().Serialize());
  auto body = lease.ToJson();
  if (!body.ok()) return body.error();
  auto r = leases_.Create(namespace_, *body, {}, stop);
  if (!r.ok() && !errors::IsAlreadyExists(r.error())) return r.error();
  if (r.ok()) KLOG_INFOS("Created the shard map", "shardMap", klog::KRef(namespace_, name_));
  return OkStatus();
}

Result<bool> MapLease::Write(const KnownMap& base, const ShardMap& next, std::stop_token stop) {
  if (base.lease == nullptr) {
    return Error::Local("InvalidShardMap", "the shard map Lease does not decode");
  }
  api::Lease lease = *base.lease;  // its resourceVersion makes the PUT a compare-and-swap
  lease.metadata.annotations.Set(std::string(kShardMapAnnotation), next.Serialize());
  auto body = lease.ToJson();
  if (!body.ok()) return body.error();
  auto r = leases_.Update(namespace_, name_, *body, {}, stop);
  if (!r.ok()) {
    if (errors::IsConflict(r.error())) return false;
    return r.error();
  }
  KnownMap k = Read(*r);
  if (k.lease == nullptr) return k.map.error();
  k.map = next;
  written_ = std::move(k);
  return true;
}

}  // namespace kcm::sharding
