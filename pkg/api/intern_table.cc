#include "pkg/api/intern_table.h"

#include <algorithm>
#include <string_view>

namespace kcm::api {
namespace {

// FNV-1a; fields end with a byte no label key contains, so ("ab","c") and ("a","bc") differ.
struct Hasher {
  uint64_t h = 14695981039346656037ull;
  void Add(std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  }
};

}  // namespace

template <typename Value>
void InternTable::SweepLocked(Table<Value>* table, size_t* sweep_at) {
  // use_count() 1: only the table holds the value, and only the table (under mu_) hands out new
  // copies, so nobody can be taking one concurrently.
  std::erase_if(*table, [](const auto& slot) { return slot.second.use_count() == 1; });
  *sweep_at = std::max(kMinSweep, 2 * table->size());
}

Labels InternTable::InternLabels(std::vector<Labels::value_type>* items) {
  if (items->empty()) return Labels();
  Labels::Canonicalize(items);
  Hasher hash;
  for (const auto& [k, v] : *items) {
    hash.Add(k);
    hash.Add(v);
  }
  std::lock_guard lock(mu_);
  auto [first, last] = labels_.equal_range(hash.h);
  for (auto it = first; it != last; ++it) {
    const Labels& set = it->second;
    if (std::equal(set.begin(), set.end(), items->begin(), items->end())) return set;
  }
  if (labels_.size() >= labels_sweep_at_) SweepLocked(&labels_, &labels_sweep_at_);
  Labels set = Labels::FromCanonical(*items);
  labels_.emplace(hash.h, set);
  return set;
}

OwnerReferences InternTable::InternOwnerReferences(std::vector<OwnerReference>&& refs) {
  if (refs.empty()) return OwnerReferences();
  Hasher hash;
  for (const OwnerReference& r : refs) {
    hash.Add(r.api_version);
    hash.Add(r.kind);
    hash.Add(r.name);
    // Hashed as held (no text made on every decode); in the hash so that lists naming one owner
    // with many uids (a client writing such pods) do not all land in one bucket.
    hash.Add(r.uid.HeldBytes());
    hash.Add(std::string_view(r.controller ? "1" : "0"));
    hash.Add(std::string_view(r.block_owner_deletion ? "1" : "0"));
  }
  std::lock_guard lock(mu_);
  auto [first, last] = owner_references_.equal_range(hash.h);
  for (auto it = first; it != last; ++it) {
    const OwnerReferences& list = it->second;
    if (std::equal(list.begin(), list.end(), refs.begin(), refs.end())) return list;
  }
  if (owner_references_.size() >= owner_references_sweep_at_) {
    SweepLocked(&owner_references_, &owner_references_sweep_at_);
  }
  OwnerReferences list(std::move(refs));
  owner_references_.emplace(hash.h, list);
  return list;
}

SharedString InternTable::InternString(std::string_view text) {
  if (text.empty()) return SharedString();
  std::lock_guard lock(mu_);
  if (auto it = strings_.find(text); it != strings_.end()) return it->second;
  if (strings_.size() >= strings_sweep_at_) SweepStringsLocked();  // as SweepLocked
  SharedString value(text);
  strings_.emplace(value.view(), value);
  return value;
}

void InternTable::SweepStringsLocked() {
  // As SweepLocked (a map keyed by the text rather than a hash).
  std::erase_if(strings_, [](const auto& slot) { return slot.second.use_count() == 1; });
  strings_sweep_at_ = std::max(kMinSweep, 2 * strings_.size());
}

Annotations InternTable::InternAnnotations(std::vector<Labels::value_type>* items) {
  if (items->empty()) return Annotations();
  Labels::Canonicalize(items);
  Hasher hash;
  for (const auto& [k, v] : *items) {
    hash.Add(k);
    hash.Add(v);
  }
  const auto same = [&](const Annotations::Map& map) {
    return std::equal(map.begin(), map.end(), items->begin(), items->end(),
                      [](const auto& entry, const Labels::value_type& item) {
                        return entry.first == item.first && entry.second == item.second;
                      });
  };
  std::lock_guard lock(mu_);
  auto [first, last] = annotations_.equal_range(hash.h);
  for (auto it = first; it != last; ++it) {
    if (same(it->second.map())) return it->second;
  }
  if (annotations_.size() >= annotations_sweep_at_) {
    SweepLocked(&annotations_, &annotations_sweep_at_);
  }
  Annotations::Map map;
  for (const auto& [k, v] : *items) map.emplace_hint(map.end(), k, v);
  Annotations value(internal::SharedConst<Annotations::Map>::Make(std::move(map)));
  annotations_.emplace(hash.h, value);
  return value;
}

InternTable::Slots InternTable::SlotCount() const {
  std::lock_guard lock(mu_);
  return Slots{labels_.size(), owner_references_.size(), strings_.size(), annotations_.size()};
}

void InternTable::Sweep() {
  std::lock_guard lock(mu_);
  SweepStringsLocked();
  SweepLocked(&annotations_, &annotations_sweep_at_);
  SweepLocked(&labels_, &labels_sweep_at_);
  SweepLocked(&owner_references_, &owner_references_sweep_at_);
}

}  // namespace kcm::api
