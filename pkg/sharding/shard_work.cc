#include "pkg/sharding/shard_work.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "pkg/api/json.h"

namespace kcm::sharding {

ShardWork ShardWorkOf(const std::map<std::string, int64_t>& objects_per_namespace) {
  std::vector<std::pair<std::string, int64_t>> weights;
  weights.reserve(objects_per_namespace.size());
  for (const auto& [ns, objects] : objects_per_namespace) {
    weights.emplace_back(ns, 1 + std::clamp<int64_t>(objects, 0, kShardWorkMaxWeight - 1));
  }
  std::sort(weights.begin(), weights.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  ShardWork work;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (i < kShardWorkTopNamespaces) {
      work.namespaces.emplace(weights[i].first, weights[i].second);
    } else {
      work.rest += weights[i].second;
    }
  }
  return work;
}

std::string EncodeShardWork(const ShardWork& work) {
  api::json::Value namespaces = api::json::Value::MakeObject();
  for (const auto& [ns, weight] : work.namespaces)
    namespaces.Set(ns, api::json::Value::Int(weight));
  api::json::Value obj = api::json::Value::MakeObject();
  obj.Set("namespaces", std::move(namespaces));
  obj.Set("rest", api::json::Value::Int(work.rest));
  return api::json::Serialize(obj);
}

std::optional<ShardWork> ParseShardWork(std::string_view text) {
  // Bounded before parsing: every replica reads every member's annotation on each pass.
  if (text.size() > kShardWorkMaxBytes) return std::nullopt;
  auto doc = api::json::Parse(text);
  if (!doc.ok() || !doc->is_object()) return std::nullopt;
  const api::json::Value* namespaces = doc->Find("namespaces");
  const api::json::Value* rest = doc->Find("rest");
  if (namespaces == nullptr || !namespaces->is_object() || rest == nullptr) return std::nullopt;
  if (namespaces->as_object().size() > kShardWorkTopNamespaces) return std::nullopt;
  ShardWork work;
  const std::optional<int64_t> r = rest->is_number() ? rest->as_int64() : std::nullopt;
  if (!r || *r < 0 || *r > kShardWorkMaxWeight) return std::nullopt;
  work.rest = *r;
  for (const auto& [ns, v] : namespaces->as_object()) {
    const std::optional<int64_t> w = v.is_number() ? v.as_int64() : std::nullopt;
    if (!w || *w < 1 || *w > kShardWorkMaxWeight || ns.empty()) return std::nullopt;
    work.namespaces[ns] = *w;
  }
  return work;
}

}  // namespace kcm::sharding
