#include "pkg/api/shared_meta.h"

#include <algorithm>
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
  const size_t views = canonical.size() * sizeof(value_type);
  Rep rep;
  // operator new[] aligns for any fundamental type, so the views at its start are aligned.
  rep.storage = std::make_unique_for_overwrite<std::byte[]>(views + total);
  char* p = reinterpret_cast<char*>(rep.storage.get() + views);
  value_type* items = reinterpret_cast<value_type*>(rep.storage.get());
  for (size_t i = 0; i < canonical.size(); ++i) {
    const auto& [k, v] = canonical[i];
    std::copy(k.begin(), k.end(), p);
    std::string_view key(p, k.size());
    p += k.size();
    std::copy(v.begin(), v.end(), p);
    std::string_view value(p, v.size());
    p += v.size();
    new (items + i) value_type(key, value);  // trivially destructible: the block frees them
  }
  rep.items = std::span<const value_type>(std::launder(items), canonical.size());
  return Labels(internal::SharedConst<Rep>::Make(std::move(rep)));
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

Labels::const_iterator Labels::find(std::string_view key) const {
  auto it = std::lower_bound(begin(), end(), key,
                             [](const value_type& e, std::string_view k) { return e.first < k; });
  return it != end() && it->first == key ? it : end();
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
  if (a.rep_.SharesWith(b.rep_)) return true;
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

Finalizers::Finalizers(Vector items)
    : rep_(items.empty() ? internal::SharedConst<Vector>()
                         : internal::SharedConst<Vector>::Make(std::move(items))) {}

const Finalizers::Vector& Finalizers::EmptyVector() {
  static const Vector empty;
  return empty;
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
