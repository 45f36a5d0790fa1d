// Labels, OwnerReferences, Annotations and SharedString: the immutable, shareable
// metadata parts of ObjectMeta (and the pod's node name). A value is a pointer to one immutable
// set (null when empty), so copies are cheap and pods of one ReplicaSet, decoded through one
// InternTable (pkg/api/intern_table.h), point at the same set instead of each owning a std::map
// (docs/design/compact-pod-record.md). Values are thread-compatible; the sets they point
// at are never modified once shared, so reading them from any number of threads is safe.
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/uid.h"

namespace kcm::api {
namespace internal {

// An 8-byte counted pointer to an immutable T (a std::shared_ptr is 16): the count lives beside
// the value, in one allocation. Null is a valid (empty) value. Copies share the value; the last
// copy frees it. Thread-safe like std::shared_ptr (atomic count).
template <typename T>
class SharedConst {
 public:
  SharedConst() = default;
  static SharedConst Make(T value) {
    SharedConst out;
    out.box_ = std::make_unique<Box>(std::move(value)).release();
    return out;
  }
  SharedConst(const SharedConst& other) : box_(other.box_) { Ref(); }
  SharedConst(SharedConst&& other) noexcept : box_(std::exchange(other.box_, nullptr)) {}
  SharedConst& operator=(const SharedConst& other) {
    SharedConst copy(other);
    std::swap(box_, copy.box_);
    return *this;
  }
  SharedConst& operator=(SharedConst&& other) noexcept {
    SharedConst moved(std::move(other));
    std::swap(box_, moved.box_);
    return *this;
  }
  ~SharedConst() { Unref(); }

  const T* get() const { return box_ != nullptr ? &box_->value : nullptr; }
  const T& operator*() const { return box_->value; }
  const T* operator->() const { return &box_->value; }
  explicit operator bool() const { return box_ != nullptr; }
  // Copies sharing the value (0 for null). Exact only where no other thread copies or drops one
  // concurrently (the InternTable reads it under its mutex, the only place new copies of an
  // interned value come from once the table alone holds it).
  uint32_t use_count() const {
    return box_ != nullptr ? box_->refs.load(std::memory_order_acquire) : 0;
  }
  bool SharesWith(const SharedConst& other) const { return box_ == other.box_; }

 private:
  struct Box {
    explicit Box(T v) : value(std::move(v)) {}
    mutable std::atomic<uint32_t> refs{1};
    const T value;
  };
  void Ref() const {
    if (box_ != nullptr) box_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref() {
    if (box_ != nullptr && box_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::unique_ptr<Box> last(box_);  // frees the value
    }
    box_ = nullptr;
  }

  Box* box_ = nullptr;
};

}  // namespace internal

// metadata.labels: key → value, sorted by key, keys unique. The read API follows std::map's
// (find/count/contains/at/size/empty/iteration in key order, ==) with string_view keys and values;
// an iterator yields each (key, value) pair by value.
class Labels {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  class const_iterator;
  using iterator = const_iterator;

  Labels() = default;
  // Builders and tests: `meta.labels = {{"app", "web"}}` and from a std::map (labels::Set).
  Labels(std::initializer_list<value_type> items);
  Labels(const std::map<std::string, std::string>& map);  // NOLINT(google-explicit-constructor)
  Labels(const Labels& other) : rep_(other.rep_) { Ref(); }
  Labels(Labels&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  Labels& operator=(const Labels& other);
  Labels& operator=(Labels&& other) noexcept;
  ~Labels() { Unref(); }

  // The one construction path for a set not taken from an InternTable: sorts by key; of
  // repeated keys the last one wins (as a JSON object or protobuf map read into a std::map).
  static Labels Make(std::vector<value_type> items);

  size_t size() const { return rep_ != nullptr ? rep_->count : 0; }
  bool empty() const { return rep_ == nullptr; }
  const_iterator begin() const;
  const_iterator end() const;
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return contains(key) ? 1 : 0; }
  bool contains(std::string_view key) const;
  // The value of `key`; throws std::out_of_range when absent (as std::map::at).
  std::string_view at(std::string_view key) const;

  std::map<std::string, std::string> ToMap() const;
  // True when both values point at the same set (what interning gives pods of one ReplicaSet).
  bool SharesStorageWith(const Labels& other) const { return rep_ == other.rep_; }

  friend bool operator==(const Labels& a, const Labels& b);

  // Sorts by key and drops all but the last of repeated keys, in place.
  static void Canonicalize(std::vector<value_type>* items);
  // A new set from canonical items (sorted, keys unique); the empty (null) value when empty.
  static Labels FromCanonical(const std::vector<value_type>& canonical);

 private:
  friend class InternTable;
  // The shared, immutable set in one allocation: the count of holders, the number of labels,
  // `ends` (where each key and each value ends in the text: key i is text[ends[2i-1], ends[2i]),
  // its value text[ends[2i], ends[2i+1]), with ends[-1] read as 0), then every key and value back
  // to back. 8 bytes a label beside the text, where (key, value) views took 32 and a second block
  // and a counted header another 48: the daemon holds one set per ReplicaSet (its pods', labels
  // and template labels), per selector and per Deployment template (docs/design/
  // compact-pod-record.md). A value is an 8-byte pointer to it, null when empty.
  struct Rep {
    mutable std::atomic<uint32_t> refs;
    uint32_t count;
    const uint32_t* ends() const { return reinterpret_cast<const uint32_t*>(this + 1); }
    const char* text() const { return reinterpret_cast<const char*>(ends() + 2 * count); }
    value_type At(size_t i) const {
      const uint32_t* e = ends();
      const uint32_t k = i == 0 ? 0 : e[2 * i - 1];
      return {std::string_view(text() + k, e[2 * i] - k),
              std::string_view(text() + e[2 * i], e[2 * i + 1] - e[2 * i])};
    }
  };
  explicit Labels(const Rep* rep) : rep_(rep) {}
  void Ref() const {
    if (rep_ != nullptr) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void Unref();
  // Holders of the set (0 for empty). Exact only where no other thread copies or drops one
  // concurrently (the InternTable reads it under its mutex: see SharedConst::use_count).
  uint32_t use_count() const {
    return rep_ != nullptr ? rep_->refs.load(std::memory_order_acquire) : 0;
  }
  // Index of the first label whose key is not less than `key`.
  size_t LowerBound(std::string_view key) const;

  const Rep* rep_ = nullptr;
};

// A random-access iterator over a Labels' (key, value) pairs, in key order; dereferencing yields
// the pair by value (views into the set).
class Labels::const_iterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = Labels::value_type;
  using difference_type = std::ptrdiff_t;
  using reference = value_type;
  using pointer = void;

  const_iterator() = default;
  value_type operator*() const { return rep_->At(i_); }
  value_type operator[](difference_type n) const { return rep_->At(i_ + n); }
  // `it->first` / `it->second`: the pair held by a proxy for the expression.
  struct Arrow {
    value_type pair;
    const value_type* operator->() const { return &pair; }
  };
  Arrow operator->() const { return Arrow{**this}; }

  const_iterator& operator++() {
    ++i_;
    return *this;
  }
  const_iterator operator++(int) {
    const_iterator old = *this;
    ++i_;
    return old;
  }
  const_iterator& operator--() {
    --i_;
    return *this;
  }
  const_iterator operator--(int) {
    const_iterator old = *this;
    --i_;
    return old;
  }
  const_iterator& operator+=(difference_type n) {
    i_ += n;
    return *this;
  }
  const_iterator& operator-=(difference_type n) {
    i_ -= n;
    return *this;
  }
  friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
  friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
  friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
  friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
    return a.i_ - b.i_;
  }
  friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.i_ == b.i_; }
  friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
    return a.i_ <=> b.i_;
  }

 private:
  friend class Labels;
  const_iterator(const Labels::Rep* rep, difference_type i) : rep_(rep), i_(i) {}
  const Labels::Rep* rep_ = nullptr;
  difference_type i_ = 0;
};

inline Labels::const_iterator Labels::begin() const {
  return const_iterator(rep_, 0);
}
inline Labels::const_iterator Labels::end() const {
  return const_iterator(rep_, static_cast<std::ptrdiff_t>(size()));
}

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  Uid uid;  // 16 bytes for canonical UUID text, the text otherwise (uid.h)
  bool controller = false;
  bool block_owner_deletion = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// metadata.ownerReferences, in API order. Read like a const std::vector. 8 bytes, null when empty.
class OwnerReferences {
 public:
  using value_type = OwnerReference;
  using const_iterator = const OwnerReference*;
  using iterator = const_iterator;

  OwnerReferences() = default;
  OwnerReferences(std::initializer_list<OwnerReference> refs)
      : OwnerReferences(std::vector<OwnerReference>(refs)) {}
  // The one construction path for a list not taken from an InternTable.
  OwnerReferences(std::vector<OwnerReference> refs);  // NOLINT(google-explicit-constructor)

  size_t size() const { return rep_ ? rep_->size() : 0; }
  bool empty() const { return size() == 0; }
  const_iterator begin() const { return rep_ ? rep_->data() : nullptr; }
  const_iterator end() const { return rep_ ? rep_->data() + rep_->size() : nullptr; }
  const OwnerReference& operator[](size_t i) const { return (*rep_)[i]; }
  const OwnerReference& front() const { return rep_->front(); }

  std::vector<OwnerReference> ToVector() const {
    return rep_ ? *rep_ : std::vector<OwnerReference>();
  }
  bool SharesStorageWith(const OwnerReferences& other) const { return rep_.SharesWith(other.rep_); }

  friend bool operator==(const OwnerReferences& a, const OwnerReferences& b);

  using Rep = std::vector<OwnerReference>;

 private:
  friend class InternTable;
  explicit OwnerReferences(internal::SharedConst<Rep> rep) : rep_(std::move(rep)) {}
  uint32_t use_count() const { return rep_.use_count(); }
  internal::SharedConst<Rep> rep_;
};

// metadata.annotations: key → value, read like a const std::map<std::string, std::string> (it
// converts to one implicitly). 8 bytes, null when empty — every cached pod's case: the pod decoder
// keeps only the deletion cost, as Pod::deletion_cost. Decoded ReplicaSets and Deployments get
// theirs through the decoder's InternTable: equal annotations (the revision and replicas
// annotations most of them carry) share one map. A write (Set / Erase, or assigning a map)
// builds a new map and replaces this value's pointer; other values sharing the old map (a cached
// object this one was copied from) are unchanged.
class Annotations {
 public:
  using Map = std::map<std::string, std::string>;
  using value_type = Map::value_type;
  using const_iterator = Map::const_iterator;
  using iterator = const_iterator;

  Annotations() = default;
  Annotations(Map map);  // NOLINT(google-explicit-constructor): assigned like the map
  Annotations(std::initializer_list<value_type> items) : Annotations(Map(items)) {}

  const Map& map() const { return rep_ ? *rep_ : EmptyMap(); }
  operator const Map&() const { return map(); }  // NOLINT(google-explicit-constructor)
  Map ToMap() const { return map(); }

  size_t size() const { return map().size(); }
  bool empty() const { return !rep_; }
  const_iterator begin() const { return map().begin(); }
  const_iterator end() const { return map().end(); }
  const_iterator find(const std::string& key) const { return map().find(key); }
  size_t count(const std::string& key) const { return map().count(key); }
  bool contains(const std::string& key) const { return map().contains(key); }
  // Throws std::out_of_range when absent (as std::map::at).
  const std::string& at(const std::string& key) const { return map().at(key); }

  // Writes: each builds a new map (a copy of this one, edited).
  void Set(const std::string& key, std::string value);
  // Returns whether `key` was there.
  bool Erase(const std::string& key);

  bool SharesStorageWith(const Annotations& other) const { return rep_.SharesWith(other.rep_); }
  friend bool operator==(const Annotations& a, const Annotations& b) {
    return a.rep_.SharesWith(b.rep_) || a.map() == b.map();
  }
  friend bool operator==(const Annotations& a, const Map& b) { return a.map() == b; }

 private:
  friend class InternTable;
  explicit Annotations(internal::SharedConst<Map> rep) : rep_(std::move(rep)) {}
  uint32_t use_count() const { return rep_.use_count(); }
  static const Map& EmptyMap();
  internal::SharedConst<Map> rep_;
};

// Immutable text in 8 bytes (null when empty), shared by copies, for text many cached objects
// repeat: a pod's spec.nodeName, interned by the decoder (InternTable::InternString), so the pods
// of one node point at one string. Reads like a const std::string (and converts to one).
class SharedString {
 public:
  SharedString() = default;
  // Copies `text` into a new, unshared string (none when empty).
  SharedString(std::string_view text);  // NOLINT(google-explicit-constructor)
  SharedString(const std::string& text) : SharedString(std::string_view(text)) {}  // NOLINT
  SharedString(const char* text) : SharedString(std::string_view(text)) {}         // NOLINT

  const std::string& str() const { return rep_ ? *rep_ : EmptyString(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)
  // Where a string_view is taken (a Condition's type passed to a lookup by type).
  operator std::string_view() const { return str(); }  // NOLINT(google-explicit-constructor)
  std::string_view view() const { return str(); }
  const char* data() const { return str().data(); }
  const char* c_str() const { return str().c_str(); }
  size_t size() const { return str().size(); }
  bool empty() const { return !rep_; }

  bool SharesStorageWith(const SharedString& other) const { return rep_.SharesWith(other.rep_); }
  friend bool operator==(const SharedString& a, const SharedString& b) {
    return a.rep_.SharesWith(b.rep_) || a.str() == b.str();
  }
  friend bool operator==(const SharedString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const SharedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedString& a, const char* b) { return a.view() == b; }
  friend auto operator<=>(const SharedString& a, const SharedString& b) {
    return a.str() <=> b.str();
  }
  // Concatenation as with a std::string ("ns" + "/" + name keys).
  friend std::string operator+(const SharedString& a, std::string_view b) {
    std::string out(a.view());
    out.append(b);
    return out;
  }
  friend std::string operator+(std::string_view a, const SharedString& b) {
    std::string out(a);
    out.append(b.view());
    return out;
  }

 private:
  friend class InternTable;
  explicit SharedString(internal::SharedConst<std::string> rep) : rep_(std::move(rep)) {}
  uint32_t use_count() const { return rep_.use_count(); }
  static const std::string& EmptyString();
  internal::SharedConst<std::string> rep_;
};

std::ostream& operator<<(std::ostream& os, const SharedString& text);

}  // namespace kcm::api
