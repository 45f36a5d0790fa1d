// MapLease: the Lease `<name>-shards` that holds the ShardMap in its annotation
// "kube-controller-manager-cpp/shard-map" (docs/design/sharding.md, "Who serves what"). Reads it
// through the Lease codec (api::DecodeLease) and changes it only by compare-and-swap: a PUT with
// the resourceVersion it was read at. Remembers its own last write, so a replica never acts on a
// map older than its own change while the informer has not shown that write yet.
// Thread-compatible (one replica's loop).
#pragma once

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/api/decoder.h"
#include "pkg/api/lease.h"
#include "pkg/cache/indexer.h"
#include "pkg/client/resource_client.h"
#include "pkg/sharding/shard_map.h"
#include "pkg/util/result.h"

namespace kcm::sharding {

// The annotation of the map Lease that holds the ShardMap.
inline constexpr std::string_view kShardMapAnnotation = "kube-controller-manager-cpp/shard-map";

// The map as read from one version of the Lease.
struct KnownMap {
  std::string resource_version;
  std::shared_ptr<const api::Lease> lease;  // the base of the next write; null if undecodable
  Result<ShardMap> map = ShardMap();        // an error when the annotation does not parse
};

class MapLease {
 public:
  MapLease(std::shared_ptr<client::RestClient> client, std::string lease_namespace,
           std::string name);

  const std::string& name() const { return name_; }

  // The map in a Lease object's JSON (a fresh map when the Lease has no annotation yet).
  KnownMap Read(std::string_view raw);
  // The newer of the informer's map and our own last write; nullopt when there is no map Lease.
  std::optional<KnownMap> Latest(cache::Indexer& cached);
  // A fresh read from the server.
  Result<KnownMap> Get(std::stop_token stop);
  // Creates the Lease with a fresh map; an existing one is left as it is.
  Status Create(std::stop_token stop);
  // Compare-and-swap: `base`'s Lease with the annotation replaced by `next`. False on a conflict
  // (someone wrote in between; the informer brings their map).
  Result<bool> Write(const KnownMap& base, const ShardMap& next, std::stop_token stop);
  // Our last successful write.
  const std::optional<KnownMap>& written() const { return written_; }

 private:
  client::ResourceClient leases_;
  const std::string namespace_;
  const std::string name_;
  api::Decoder decoder_;
  std::optional<KnownMap> written_;
};

}  // namespace kcm::sharding
