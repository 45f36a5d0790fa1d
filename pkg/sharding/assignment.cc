#include "pkg/sharding/assignment.h"

#include <algorithm>

namespace kcm::sharding {
namespace {

std::vector<uint64_t> Boundaries(const Partition& p) {
  std::vector<uint64_t> out;
  for (size_t i = 1; i < p.size(); ++i) out.push_back(p[i].range.first);
  return out;
}

const std::string& OwnerAt(const Partition& p, uint64_t hash) {
  auto it = std::upper_bound(p.begin(), p.end(), hash,
                             [](uint64_t h, const ShardMapEntry& e) { return h < e.range.first; });
  return std::prev(it)->owner;
}

const std::string& Effective(const ShardMapEntry& e) {
  return e.next.empty() ? e.owner : e.next;
}

}  // namespace

Partition DesiredPartition(const std::set<std::string>& members, std::vector<uint64_t> hashes,
                           const ShardMap& current) {
  std::sort(hashes.begin(), hashes.end());
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  const size_t m = members.size();
  const size_t n = hashes.size();
  if (m == 0) return {{api::ShardRange{0, UINT64_MAX}, "", ""}};
  const size_t runs = std::max<size_t>(1, std::min(m, n));
  // Run k holds hashes [k*n/runs, (k+1)*n/runs); its boundary with run k-1 lies halfway between
  // the last hash of one and the first of the other.
  Partition p;
  uint64_t first = 0;
  for (size_t k = 0; k < runs; ++k) {
    uint64_t last = UINT64_MAX;
    if (k + 1 < runs) {
      const size_t i = (k + 1) * n / runs;  // first hash of run k+1
      const uint64_t lo = hashes[i - 1], hi = hashes[i];
      last = lo + (hi - lo - 1) / 2;  // lo <= last < hi
    }
    p.push_back({api::ShardRange{first, last}, "", ""});
    if (last != UINT64_MAX) first = last + 1;
  }
  // Overlap of each run with what each member serves now.
  std::vector<std::map<std::string, int>> overlap(p.size());
  for (uint64_t h : hashes) {
    const std::string& who = Effective(current.At(h));
    if (!members.contains(who)) continue;
    const size_t k =
        std::upper_bound(p.begin(), p.end(), h,
                         [](uint64_t x, const ShardMapEntry& e) { return x < e.range.first; }) -
        p.begin() - 1;
    ++overlap[k][who];
  }
  // Greedy: the largest overlaps first, one run per member.
  struct Candidate {
    int count;
    size_t run;
    std::string member;
  };
  std::vector<Candidate> cands;
  for (size_t k = 0; k < p.size(); ++k) {
    for (const auto& [who, c] : overlap[k]) cands.push_back({c, k, who});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.run != b.run) return a.run < b.run;
    return a.member < b.member;
  });
  std::set<std::string> taken;
  for (const Candidate& c : cands) {
    if (!p[c.run].owner.empty() || taken.contains(c.member)) continue;
    p[c.run].owner = c.member;
    taken.insert(c.member);
  }
  auto spare = members.begin();
  for (ShardMapEntry& e : p) {
    if (!e.owner.empty()) continue;
    while (taken.contains(*spare)) ++spare;
    e.owner = *spare;
    taken.insert(*spare);
  }
  return p;
}

std::map<std::string, int> Load(const ShardMap& map, const std::set<std::string>& live,
                                const std::vector<uint64_t>& hashes) {
  std::map<std::string, int> load;
  for (const std::string& m : live) load[m] = 0;
  std::vector<uint64_t> sorted = hashes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (uint64_t h : sorted) {
    const std::string& who = Effective(map.At(h));
    if (live.contains(who)) ++load[who];
  }
  return load;
}

bool Unbalanced(const std::map<std::string, int>& load, size_t namespaces) {
  if (load.empty() || namespaces == 0) return false;
  int lo = load.begin()->second, hi = lo;
  for (const auto& [who, n] : load) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  const double fair = static_cast<double>(namespaces) / static_cast<double>(load.size());
  const double slack = std::max(1.0, fair / 5);
  if (hi - lo <= 1) return false;
  return hi > fair + slack || lo < fair - slack || (lo == 0 && hi >= 2);
}

bool AssignFree(ShardMap& map, const Partition& desired, const std::set<std::string>& live) {
  if (live.empty()) return false;
  const ShardMap before = map;
  map.SplitAt(Boundaries(desired));
  for (ShardMapEntry& e : map.mutable_entries()) {
    if (!e.next.empty() && !live.contains(e.next)) e.next.clear();
    if (!live.contains(e.owner)) {
      e.owner = !e.next.empty() ? e.next : OwnerAt(desired, e.range.first);
      e.next.clear();
    }
  }
  map.Merge();
  return !(map == before);
}

bool Rebalance(ShardMap& map, const Partition& desired, const std::set<std::string>& live) {
  if (live.empty()) return false;
  const ShardMap before = map;
  map.SplitAt(Boundaries(desired));
  for (ShardMapEntry& e : map.mutable_entries()) {
    const std::string& want = OwnerAt(desired, e.range.first);
    if (e.owner == want || want.empty()) {
      e.next.clear();
    } else if (!live.contains(e.owner)) {
      e.owner = want;
      e.next.clear();
    } else {
      e.next = want;
    }
  }
  map.Merge();
  return !(map == before);
}

bool CompleteHandoffs(ShardMap& map, const std::string& owner) {
  bool changed = false;
  for (ShardMapEntry& e : map.mutable_entries()) {
    if (e.owner != owner || e.next.empty()) continue;
    e.owner = std::move(e.next);
    e.next.clear();
    changed = true;
  }
  map.Merge();
  return changed;
}

bool Release(ShardMap& map, const std::string& owner, const Partition& desired) {
  bool mine = false;
  for (const ShardMapEntry& e : map.entries()) mine = mine || e.owner == owner;
  if (!mine) return false;
  map.SplitAt(Boundaries(desired));
  for (ShardMapEntry& e : map.mutable_entries()) {
    if (e.owner != owner) continue;
    e.owner = !e.next.empty() ? e.next : OwnerAt(desired, e.range.first);
    if (e.owner == owner) e.owner.clear();
    e.next.clear();
  }
  map.Merge();
  return true;
}

}  // namespace kcm::sharding
