#include "pkg/cache/index.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace kcm::cache {

std::string KeyText::str() const {
  std::string out;
  out.reserve(size());
  out.append(first).append(second).append(third);
  return out;
}

int Compare(const KeyText& a, const KeyText& b) {
  const std::string_view ap[3] = {a.first, a.second, a.third};
  const std::string_view bp[3] = {b.first, b.second, b.third};
  size_t ai = 0, bi = 0, ao = 0, bo = 0;  // piece index and offset in it
  while (true) {
    while (ai < 3 && ao == ap[ai].size()) ++ai, ao = 0;
    while (bi < 3 && bo == bp[bi].size()) ++bi, bo = 0;
    if (ai == 3 || bi == 3) return (ai == 3 ? 0 : 1) - (bi == 3 ? 0 : 1);
    const size_t n = std::min(ap[ai].size() - ao, bp[bi].size() - bo);
    if (int c = ap[ai].substr(ao, n).compare(bp[bi].substr(bo, n)); c != 0) return c;
    ao += n;
    bo += n;
  }
}

size_t HashKeyText(const KeyText& key) {
  // The library's hash of the joined text, so that every split of one text hashes alike; joined
  // on the stack for the usual key (std::hash reads 8 bytes a step, a byte-wise hash was 5 % of
  // an initial sync's CPU, docs/benchmarks.md).
  if (key.second.empty() && key.third.empty()) return std::hash<std::string_view>{}(key.first);
  constexpr size_t kStack = 256;
  if (key.size() > kStack) return std::hash<std::string>{}(key.str());
  char joined[kStack];
  char* end = std::copy(key.first.begin(), key.first.end(), joined);
  end = std::copy(key.second.begin(), key.second.end(), end);
  end = std::copy(key.third.begin(), key.third.end(), end);
  return std::hash<std::string_view>{}(std::string_view(joined, static_cast<size_t>(end - joined)));
}

KeyText ObjectKeyText(const api::Object& obj) {
  const api::ObjectMeta& meta = obj.Meta();
  if (meta.namespace_.empty()) return KeyText(meta.name);
  return KeyText(meta.namespace_, "/", meta.name);
}

void IndexKeySet::insert(const StoreItem* item) {
  const KeyText key = item->Key();
  // A LIST comes in key order, so an initial list appends: one comparison, not a search.
  if (keys_.empty() || keys_.back()->Key() < key) {
    ReserveOneMore();
    keys_.push_back(item);
    return;
  }
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key, KeyPtrLess{});
  if (it != keys_.end() && (*it)->Key() == key) return;
  const size_t at = static_cast<size_t>(it - keys_.begin());
  ReserveOneMore();
  keys_.insert(keys_.begin() + static_cast<std::ptrdiff_t>(at), item);
}

void IndexKeySet::ReserveOneMore() {
  const size_t size = keys_.size();
  if (size < keys_.capacity()) return;
  // Grow by a quarter (at least one) instead of the vector's doubling: the sets live as long as
  // the cache, most hold one owner's few objects (10 pods: room for 10, not 16), and an insert
  // moves the tail anyway, so the extra reallocations cost little beside it.
  keys_.reserve(size + std::max<size_t>(1, size / 4));
}

bool IndexKeySet::erase(const KeyText& key) {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key, KeyPtrLess{});
  if (it == keys_.end() || !((*it)->Key() == key)) return false;
  keys_.erase(it);
  // Give memory back once a set has shrunk to a quarter of what it holds room for, so a set that
  // was large once (a namespace emptied) does not keep its peak.
  if (keys_.capacity() > 16 && keys_.size() < keys_.capacity() / 4) keys_.shrink_to_fit();
  return true;
}

bool IndexKeySet::contains(const KeyText& key) const {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key, KeyPtrLess{});
  return it != keys_.end() && (*it)->Key() == key;
}

void IndexKeySet::ShrinkToFit() {
  keys_.shrink_to_fit();
}

void IndexKeySet::Sort() {
  std::sort(keys_.begin(), keys_.end(), KeyPtrLess{});
  keys_.erase(
      std::unique(keys_.begin(), keys_.end(),
                  [](const StoreItem* a, const StoreItem* b) { return a->Key() == b->Key(); }),
      keys_.end());
}

std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj) {
  return {obj.Meta().namespace_};
}

}  // namespace kcm::cache
