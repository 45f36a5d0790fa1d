#include "pkg/sharding/shard_map.h"

#include <algorithm>

#include "pkg/api/json.h"

namespace kcm::sharding {
namespace {

Error Invalid(const std::string& why) {
  return Error::Local("InvalidShardMap", "shard map: " + why);
}

}  // namespace

ShardMap::ShardMap() : entries_{{api::ShardRange{0, UINT64_MAX}, "", ""}} {}

Result<ShardMap> ShardMap::FromEntries(std::vector<ShardMapEntry> entries) {
  if (entries.empty()) return Invalid("no ranges");
  uint64_t expect = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const api::ShardRange& r = entries[i].range;
    if (r.first != expect || r.last < r.first) {
      return Invalid("range " + std::to_string(i) + " starts at " + api::ShardHex(r.first) +
                     ", expected " + api::ShardHex(expect));
    }
    if (r.last == UINT64_MAX) {
      if (i + 1 != entries.size()) return Invalid("ranges after the top of the hash space");
      ShardMap m;
      m.entries_ = std::move(entries);
      return m;
    }
    expect = r.last + 1;
  }
  return Invalid("the ranges end at " + api::ShardHex(expect) + ", below the top of the space");
}

Result<ShardMap> ShardMap::Parse(std::string_view text) {
  auto doc = api::json::Parse(text);
  if (!doc.ok()) return Invalid(doc.error().message);
  const api::json::Value* ranges = doc->is_object() ? doc->Find("ranges") : nullptr;
  if (ranges == nullptr || !ranges->is_array()) return Invalid("no \"ranges\" array");
  std::vector<ShardMapEntry> entries;
  for (const api::json::Value& v : ranges->as_array()) {
    auto str = [&](std::string_view key) -> std::string {
      const api::json::Value* f = v.is_object() ? v.Find(key) : nullptr;
      return f != nullptr && f->is_string() ? f->as_string() : std::string();
    };
    // The selector's bound syntax and checks, on the two strings alone (spliced into a selector's
    // text, a bound holding "') || shardRange(…" would have parsed as a second range).
    auto range = api::ParseShardRange(str("start"), str("end"));
    if (!range.ok()) return Invalid(range.error().message);
    entries.push_back({*range, str("owner"), str("next")});
  }
  return FromEntries(std::move(entries));
}

std::string ShardMap::Serialize() const {
  api::json::Value::Array ranges;
  for (const ShardMapEntry& e : entries_) {
    api::json::Value v = api::json::Value::MakeObject();
    v.Set("start", api::json::Value::String(api::ShardHex(e.range.first)));
    v.Set("end", api::json::Value::String(api::ShardEndHex(e.range)));
    v.Set("owner", api::json::Value::String(e.owner));
    if (!e.next.empty()) v.Set("next", api::json::Value::String(e.next));
    ranges.push_back(std::move(v));
  }
  api::json::Value doc = api::json::Value::MakeObject();
  doc.Set("ranges", api::json::Value::MakeArray(std::move(ranges)));
  return api::json::Serialize(doc);
}

void ShardMap::SplitAt(const std::vector<uint64_t>& points) {
  std::vector<uint64_t> sorted = points;
  std::sort(sorted.begin(), sorted.end());
  std::vector<ShardMapEntry> out;
  size_t p = 0;
  for (const ShardMapEntry& e : entries_) {
    ShardMapEntry cur = e;
    while (p < sorted.size() && sorted[p] <= cur.range.first) ++p;
    while (p < sorted.size() && sorted[p] <= cur.range.last) {
      ShardMapEntry head = cur;
      head.range.last = sorted[p] - 1;
      out.push_back(head);
      cur.range.first = sorted[p];
      ++p;
    }
    out.push_back(cur);
  }
  entries_ = std::move(out);
}

void ShardMap::Merge() {
  std::vector<ShardMapEntry> out;
  for (const ShardMapEntry& e : entries_) {
    if (!out.empty() && out.back().owner == e.owner && out.back().next == e.next) {
      out.back().range.last = e.range.last;
    } else {
      out.push_back(e);
    }
  }
  entries_ = std::move(out);
}

std::vector<api::ShardRange> ShardMap::Served(std::string_view owner) const {
  std::vector<api::ShardRange> out;
  if (owner.empty()) return out;  // "" is nobody
  for (const ShardMapEntry& e : entries_) {
    if (e.owner == owner && e.next.empty()) out.push_back(e.range);
  }
  return JoinAdjacent(std::move(out));
}

const ShardMapEntry& ShardMap::At(uint64_t hash) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), hash,
                             [](uint64_t h, const ShardMapEntry& e) { return h < e.range.first; });
  return *std::prev(it);  // entries_[0] starts at 0, so `it` is never begin()
}

std::vector<api::ShardRange> JoinAdjacent(std::vector<api::ShardRange> ranges) {
  std::vector<api::ShardRange> out;
  for (const api::ShardRange& r : ranges) {
    if (!out.empty() && out.back().last != UINT64_MAX && out.back().last + 1 == r.first) {
      out.back().last = r.last;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<api::ShardRange> Subtract(const std::vector<api::ShardRange>& a,
                                      const std::vector<api::ShardRange>& b) {
  std::vector<api::ShardRange> out;
  for (api::ShardRange r : a) {
    bool empty = false;
    for (const api::ShardRange& c : b) {
      if (c.last < r.first || c.first > r.last) continue;
      if (c.first > r.first) out.push_back({r.first, c.first - 1});
      if (c.last >= r.last) {
        empty = true;
        break;
      }
      r.first = c.last + 1;
    }
    if (!empty) out.push_back(r);
  }
  std::sort(out.begin(), out.end(),
            [](const api::ShardRange& x, const api::ShardRange& y) { return x.first < y.first; });
  return out;
}

}  // namespace kcm::sharding
