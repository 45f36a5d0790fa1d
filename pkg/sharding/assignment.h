// The balancing rules of `--sharding=namespace` (docs/design/sharding.md): where range boundaries
// go, who should serve each range, and the map changes every replica or the coordinator makes.
// Pure functions over a ShardMap; thread-compatible.
//
// Balance follows the namespaces that exist, not an equal split of the hash space: FNV-1a puts
// names that differ only at their end close together ("shard-1" … "shard-8" share their top
// 16 bits), so equal ranges of the space would hand them all to one replica. Boundaries are placed
// between observed namespace hashes, giving each replica a contiguous run of about N/M of them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pkg/sharding/shard_map.h"

namespace kcm::sharding {

// The desired partition: entries covering the whole space with `owner` set ("" when there are no
// members); `next` unused.
using Partition = std::vector<ShardMapEntry>;

// Splits the space into min(M, N) runs of about N/M namespace hashes each (one run over the
// whole space when N = 0), and gives each run to a member: a run goes to the member that serves
// most of its namespaces in `current` (its owner, or the replica it is being handed to), so a
// rebalance moves little; the others get the remaining runs in name order. `hashes`: the
// namespaces' api::ShardHash, in any order, duplicates allowed.
Partition DesiredPartition(const std::set<std::string>& members, std::vector<uint64_t> hashes,
                           const ShardMap& current);

// Namespaces per live member in `map` (counted for the replica that will serve them: `next`
// when a handoff is pending, else `owner`); members that serve none are listed with 0.
std::map<std::string, int> Load(const ShardMap& map, const std::set<std::string>& live,
                                const std::vector<uint64_t>& hashes);

// Whether `load` is far enough from an even split to move namespaces: a member more than a fifth
// (at least one namespace) above or below N/M, or one with none while another has two or more.
bool Unbalanced(const std::map<std::string, int>& load, size_t namespaces);

// Any replica, at any time: ranges whose owner is not live (nobody, expired or released) go to
// their owner in `desired`, at once (no live replica can be serving them); a pending handoff to a
// replica that is not live is dropped. Returns whether the map changed.
bool AssignFree(ShardMap& map, const Partition& desired, const std::set<std::string>& live);

// The coordinator, when Unbalanced: every range whose desired owner differs is asked to move —
// directly when its owner is not live, else as a handoff (`next`) its owner completes once it
// stopped serving it. Returns whether the map changed.
bool Rebalance(ShardMap& map, const Partition& desired, const std::set<std::string>& live);

// The owner, after it stopped serving its ranges with a pending handoff: each goes to its `next`.
// Returns whether the map changed.
bool CompleteHandoffs(ShardMap& map, const std::string& owner);

// A replica leaving (graceful stop), after it stopped serving: each of its ranges goes to its
// pending `next`, else to its owner in `desired` (computed without the leaving replica), else to
// nobody. Returns whether the map changed.
bool Release(ShardMap& map, const std::string& owner, const Partition& desired);

}  // namespace kcm::sharding
