// ShardWork: the work a replica of `--sharding=namespace` publishes in its member Lease, so the
// coordinator can place range boundaries by work rather than by namespace count
// (docs/design/sharding.md, "Balance by work"). Plain data; thread-compatible.
//
// The annotation "kube-controller-manager-cpp/shard-work" holds compact JSON:
//   {"namespaces":{"<namespace>":<weight>,…},"rest":<weight>}
// a namespace's weight is 1 + the pods + the ReplicaSets the replica's informer caches hold for
// it; at most the kShardWorkTopNamespaces heaviest namespaces are listed and "rest" sums the
// weights of the others. A value longer than kShardWorkMaxBytes, or one that does not parse, is
// ignored: that replica's namespaces then count one each, as in a quiet cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kcm::sharding {

inline constexpr std::string_view kShardWorkAnnotation = "kube-controller-manager-cpp/shard-work";
inline constexpr size_t kShardWorkTopNamespaces = 100;
inline constexpr size_t kShardWorkMaxBytes = 32 * 1024;
// No replica holds a billion objects: a larger weight is hostile or corrupt, and sums of the
// accepted ones cannot overflow.
inline constexpr int64_t kShardWorkMaxWeight = 1'000'000'000;

struct ShardWork {
  std::map<std::string, int64_t> namespaces;  // weight per listed namespace, each >= 1
  int64_t rest = 0;                           // summed weight of the namespaces not listed
  friend bool operator==(const ShardWork&, const ShardWork&) = default;
};

// From the objects (pods + ReplicaSets) a replica holds per namespace: the heaviest
// kShardWorkTopNamespaces namespaces (ties by name) with weight 1 + objects, the rest summed.
ShardWork ShardWorkOf(const std::map<std::string, int64_t>& objects_per_namespace);

std::string EncodeShardWork(const ShardWork& work);
// nullopt when `text` is over kShardWorkMaxBytes, not that JSON, lists more than
// kShardWorkTopNamespaces namespaces, or holds a weight below 1 (a negative rest) or above
// kShardWorkMaxWeight.
std::optional<ShardWork> ParseShardWork(std::string_view text);

}  // namespace kcm::sharding
