#include "pkg/api/shared_meta.h"

#include <algorithm>
#include <limits>
#include <new>
#include <ostream>
#include <stdexcept>

namespace kcm::api {

void Labels::Canonicalize(std::vector<value_type>* items) {
  // Stable, so of equal keys the later one stays later; keep the last of each run.
  std::stable_sort(items->begin(), items->end(),
                   [](const value_type& a, const value_type& b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < items->size(); ++i) {
    if (i + 1 < items->size() && (*items)[i + 1].first == (*items)[i].first) continue;
    (*items)[out++] = (*items)[i];
  }
  items->resize(out);
}

Labels Labels::FromCanonical(const std::vector<value_type>& canonical) {
  if (canonical.empty()) return Labels();
  size_t total = 0;
  for (const auto& [k, v] : canonical) total += k.size() + v.size();
  const size_t ends = 2 * canonical.size();
  if (total > std::numeric_limits<uint32_t>::max() ||
      canonical.size() > std::numeric_limits<uint32_t>::max() / 2) {
    throw std::length_error("Labels over 4 GiB");
  }
  void* mem = ::operator new(sizeof(Rep) + ends * sizeof(uint32_t) + total);
  Rep* rep = ::new (mem) Rep{{1}, static_cast<uint32_t>(canonical.size())};
  // The ends and the text are plain bytes after the header (uint32_t needs no construction; the
  // header's alignment, 4, is theirs).
  auto* end_at = reinterpret_cast<uint32_t*>(rep + 1);
  char* text = reinterpret_cast<char*>(end_at + ends);
  uint32_t at = 0;
  for (const auto& [k, v] : canonical) {
    std::copy(k.begin(), k.end(), text + at);
    at += static_cast<uint32_t>(k.size());
    *end_at++ = at;
    std::copy(v.begin(), v.end(), text + at);
    at += static_cast<uint32_t>(v.size());
    *end_at++ = at;
  }
  return Labels(rep);
}

Labels& Labels::operator=(const Labels& other) {
  Labels copy(other);
  std::swap(rep_, copy.rep_);
  return *this;
}

Labels& Labels::operator=(Labels&& other) noexcept {
  Labels moved(std::move(other));
  std::swap(rep_, moved.rep_);
  return *this;
}

void Labels::Unref() {
  if (rep_ != nullptr && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    rep_->~Rep();
    ::operator delete(const_cast<Rep*>(rep_));
  }
  rep_ = nullptr;
}

Labels Labels::Make(std::vector<value_type> items) {
  Canonicalize(&items);
  return FromCanonical(items);
}

Labels::Labels(std::initializer_list<value_type> items)
    : Labels(Make(std::vector<value_type>(items))) {}

Labels::Labels(const std::map<std::string, std::string>& map) {
  std::vector<value_type> items;
  items.reserve(map.size());
  for (const auto& [k, v] : map) items.emplace_back(k, v);
  *this = Make(std::move(items));
}

size_t Labels::LowerBound(std::string_view key) const {
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (rep_->At(mid).first < key) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Labels::const_iterator Labels::find(std::string_view key) const {
  const size_t i = LowerBound(key);
  return i < size() && rep_->At(i).first == key ? const_iterator(rep_, static_cast<ptrdiff_t>(i))
                                                : end();
}

bool Labels::contains(std::string_view key) const {
  return find(key) != end();
}

std::string_view Labels::at(std::string_view key) const {
  auto it = find(key);
  if (it == end()) throw std::out_of_range("Labels::at: no label " + std::string(key));
  return it->second;
}

std::map<std::string, std::string> Labels::ToMap() const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : *this) out.emplace(k, v);
  return out;
}

bool operator==(const Labels& a, const Labels& b) {
  if (a.rep_ == b.rep_) return true;
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

OwnerReferences::OwnerReferences(std::vector<OwnerReference> refs)
    : rep_(refs.empty() ? internal::SharedConst<Rep>()
                        : internal::SharedConst<Rep>::Make(std::move(refs))) {}

bool operator==(const OwnerReferences& a, const OwnerReferences& b) {
  if (a.rep_.SharesWith(b.rep_)) return true;
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

Annotations::Annotations(Map map)
    : rep_(map.empty() ? internal::SharedConst<Map>()
                       : internal::SharedConst<Map>::Make(std::move(map))) {}

const Annotations::Map& Annotations::EmptyMap() {
  static const Map empty;
  return empty;
}

void Annotations::Set(const std::string& key, std::string value) {
  Map edited = map();
  edited.insert_or_assign(key, std::move(value));
  *this = Annotations(std::move(edited));
}

bool Annotations::Erase(const std::string& key) {
  if (!contains(key)) return false;
  Map edited = map();
  edited.erase(key);
  *this = Annotations(std::move(edited));
  return true;
}

SharedString::SharedString(std::string_view text)
    : rep_(text.empty() ? internal::SharedConst<std::string>()
                        : internal::SharedConst<std::string>::Make(std::string(text))) {}

const std::string& SharedString::EmptyString() {
  static const std::string empty;
  return empty;
}

std::ostream& operator<<(std::ostream& os, const SharedString& text) {
  return os << text.str();
}

}  // namespace kcm::api
