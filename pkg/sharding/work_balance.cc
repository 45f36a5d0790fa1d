#include "pkg/sharding/work_balance.h"

#include <algorithm>

#include "pkg/api/shard_selector.h"

namespace kcm::sharding {
namespace {

const std::string& Effective(const ShardMapEntry& e) {
  return e.next.empty() ? e.owner : e.next;
}

// A run of consecutive namespace hashes [begin, end) of the weight list, and its weight.
struct Run {
  size_t begin;
  size_t end;
  int64_t weight;
};

// Cuts `weights` into runs of about `target` each; a namespace of `target` or more is a run of
// its own.
std::vector<Run> CutRuns(const std::vector<NamespaceWeight>& weights, double target) {
  std::vector<Run> runs;
  Run cur{0, 0, 0};
  for (size_t i = 0; i < weights.size(); ++i) {
    if (static_cast<double>(weights[i].weight) >= target && cur.end > cur.begin) {
      runs.push_back(cur);
      cur = Run{i, i, 0};
    }
    cur.end = i + 1;
    cur.weight += weights[i].weight;
    if (static_cast<double>(cur.weight) >= target) {
      runs.push_back(cur);
      cur = Run{i + 1, i + 1, 0};
    }
  }
  if (cur.end > cur.begin) runs.push_back(cur);
  return runs;
}

}  // namespace

std::vector<NamespaceWeight> WeighNamespaces(const std::vector<uint64_t>& hashes,
                                             const std::map<std::string, ShardWork>& work,
                                             const ShardMap& map) {
  std::vector<NamespaceWeight> out;
  out.reserve(hashes.size());
  for (uint64_t h : hashes) out.push_back({h, 1});
  auto find = [&out](uint64_t h) -> NamespaceWeight* {
    auto it = std::lower_bound(out.begin(), out.end(), h,
                               [](const NamespaceWeight& w, uint64_t x) { return w.hash < x; });
    return it != out.end() && it->hash == h ? &*it : nullptr;
  };
  for (const auto& [member, published] : work) {
    std::set<uint64_t> listed;
    for (const auto& [ns, weight] : published.namespaces) {
      const uint64_t h = api::ShardHash(ns);
      listed.insert(h);
      if (NamespaceWeight* w = find(h)) w->weight = std::max(w->weight, weight);
    }
    if (published.rest <= 0) continue;
    std::vector<NamespaceWeight*> unlisted;
    for (NamespaceWeight& w : out) {
      if (!listed.contains(w.hash) && map.At(w.hash).owner == member) unlisted.push_back(&w);
    }
    if (unlisted.empty()) continue;
    const auto n = static_cast<int64_t>(unlisted.size());
    const int64_t each = (published.rest + n - 1) / n;
    for (NamespaceWeight* w : unlisted) w->weight = std::max(w->weight, each);
  }
  return out;
}

Partition WeightedPartition(const std::set<std::string>& members,
                            const std::vector<NamespaceWeight>& weights, const ShardMap& current) {
  if (members.empty() || weights.empty()) {
    std::vector<uint64_t> hashes;
    for (const NamespaceWeight& w : weights) hashes.push_back(w.hash);
    return DesiredPartition(members, std::move(hashes), current);
  }
  int64_t total = 0;
  for (const NamespaceWeight& w : weights) total += w.weight;
  const double fair = static_cast<double>(total) / static_cast<double>(members.size());
  const std::vector<Run> runs = CutRuns(weights, fair / 4);

  // Weight of each run each member serves now.
  std::vector<std::map<std::string, int64_t>> overlap(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t i = runs[r].begin; i < runs[r].end; ++i) {
      const std::string& who = Effective(current.At(weights[i].hash));
      if (members.contains(who)) overlap[r][who] += weights[i].weight;
    }
  }
  std::vector<size_t> order(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(),
                   [&runs](size_t a, size_t b) { return runs[a].weight > runs[b].weight; });
  std::map<std::string, int64_t> assigned;
  for (const std::string& m : members) assigned[m] = 0;
  std::vector<std::string> owner(runs.size());
  for (size_t r : order) {
    // The member serving most of it, if it stays within a tenth over the even share (half the
    // slack WorkUnbalanced allows, so a placement never trips it); else the least loaded.
    std::string sticky;
    int64_t most = 0;
    for (const auto& [who, w] : overlap[r]) {
      if (w > most) most = w, sticky = who;
    }
    if (!sticky.empty() && static_cast<double>(assigned[sticky] + runs[r].weight) <= fair * 1.1) {
      owner[r] = sticky;
    } else {
      owner[r] =
          std::min_element(assigned.begin(), assigned.end(), [](const auto& a, const auto& b) {
            return a.second < b.second;
          })->first;
    }
    assigned[owner[r]] += runs[r].weight;
  }
  Partition p;
  uint64_t first = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    uint64_t last = UINT64_MAX;
    if (r + 1 < runs.size()) {
      const uint64_t lo = weights[runs[r].end - 1].hash, hi = weights[runs[r + 1].begin].hash;
      last = lo + (hi - lo - 1) / 2;  // lo <= last < hi
    }
    if (!p.empty() && p.back().owner == owner[r]) {
      p.back().range.last = last;
    } else {
      p.push_back({api::ShardRange{first, last}, owner[r], ""});
    }
    if (last != UINT64_MAX) first = last + 1;
  }
  return p;
}

std::map<std::string, int64_t> WorkLoad(const ShardMap& map, const std::set<std::string>& live,
                                        const std::vector<NamespaceWeight>& weights) {
  std::map<std::string, int64_t> load;
  for (const std::string& m : live) load[m] = 0;
  for (const NamespaceWeight& w : weights) {
    const std::string& who = Effective(map.At(w.hash));
    if (live.contains(who)) load[who] += w.weight;
  }
  return load;
}

bool WorkUnbalanced(const std::map<std::string, int64_t>& load) {
  if (load.empty()) return false;
  int64_t total = 0, busiest = 0;
  for (const auto& [who, w] : load) {
    total += w;
    busiest = std::max(busiest, w);
  }
  // busiest / total > (1 / M) * 6 / 5, in integers.
  return total > 0 && busiest * static_cast<int64_t>(load.size()) * 5 > total * 6;
}

Placement Place(const std::set<std::string>& members, const std::vector<uint64_t>& hashes,
                const std::map<std::string, ShardWork>& work, const ShardMap& map) {
  Placement p;
  if (!work.empty()) p.weights = WeighNamespaces(hashes, work, map);
  // Published work with every namespace at weight 1 (no pods, no ReplicaSets) is a quiet
  // cluster too.
  if (std::all_of(p.weights.begin(), p.weights.end(),
                  [](const NamespaceWeight& w) { return w.weight == 1; })) {
    p.weights.clear();
    p.desired = DesiredPartition(members, hashes, map);
    return p;
  }
  p.desired = WeightedPartition(members, p.weights, map);
  return p;
}

bool Uneven(const Placement& placement, const ShardMap& next, const std::set<std::string>& members,
            const std::vector<uint64_t>& hashes) {
  if (placement.weights.empty()) return Unbalanced(Load(next, members, hashes), hashes.size());
  return WorkUnbalanced(WorkLoad(next, members, placement.weights));
}

bool RebalanceGate::Due(bool unbalanced, bool by_work, Clock::time_point now) {
  if (!unbalanced) {
    uneven_since_.reset();
    if (!even_since_) even_since_ = now;
    if (now - *even_since_ >= kMaxHoldFactor * first_hold_) hold_ = first_hold_;
    return false;
  }
  even_since_.reset();
  if (!uneven_since_) uneven_since_ = now;
  if (now - *uneven_since_ < hold_) return false;
  uneven_since_.reset();
  hold_ = by_work ? std::min(2 * hold_, kMaxHoldFactor * first_hold_) : first_hold_;
  return true;
}

void RebalanceGate::SeeMembers(const std::set<std::string>& members) {
  if (members == members_) return;
  Reset();
  members_ = members;
}

void RebalanceGate::Reset() {
  hold_ = first_hold_;
  uneven_since_.reset();
  even_since_.reset();
}

}  // namespace kcm::sharding
