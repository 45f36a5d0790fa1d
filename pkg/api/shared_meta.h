// Labels and OwnerReferences: the immutable, shareable metadata parts of ObjectMeta. A value is a
// shared_ptr to one immutable set (null when empty), so copies are cheap and pods of one
// ReplicaSet, decoded through one InternTable (pkg/api/intern_table.h), point at the same set
// instead of each owning a std::map (docs/architecture.md "Compact pod records"). Values are
// thread-compatible; the sets they point at are never modified, so reading them from any number
// of threads is safe.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kcm::api {

// metadata.labels: key → value, sorted by key, keys unique. The read API follows std::map's
// (find/count/contains/at/size/empty/iteration in key order, ==) with string_view keys and values.
class Labels {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;
  using const_iterator = const value_type*;
  using iterator = const_iterator;

  Labels() = default;
  // Builders and tests: `meta.labels = {{"app", "web"}}` and from a std::map (labels::Set).
  Labels(std::initializer_list<value_type> items);
  Labels(const std::map<std::string, std::string>& map);  // NOLINT(google-explicit-constructor)

  // The one construction path for a set not taken from an InternTable: sorts by key; of
  // repeated keys the last one wins (as a JSON object or protobuf map read into a std::map).
  static Labels Make(std::vector<value_type> items);

  size_t size() const { return rep_ ? rep_->items.size() : 0; }
  bool empty() const { return size() == 0; }
  const_iterator begin() const { return rep_ ? rep_->items.data() : nullptr; }
  const_iterator end() const { return rep_ ? rep_->items.data() + rep_->items.size() : nullptr; }
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const { return find(key) != end() ? 1 : 0; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // The value of `key`; throws std::out_of_range when absent (as std::map::at).
  std::string_view at(std::string_view key) const;

  std::map<std::string, std::string> ToMap() const;
  // True when both values point at the same set (what interning gives pods of one ReplicaSet).
  bool SharesStorageWith(const Labels& other) const { return rep_ == other.rep_; }

  friend bool operator==(const Labels& a, const Labels& b);

  // The shared, immutable set. `chars` holds every key and value back to back; `items` views it.
  struct Rep {
    std::string chars;
    std::vector<value_type> items;
  };
  // Sorts by key and drops all but the last of repeated keys, in place.
  static void Canonicalize(std::vector<value_type>* items);
  // A new set from canonical items (sorted, keys unique); nullptr when empty.
  static std::shared_ptr<const Rep> NewRep(const std::vector<value_type>& canonical);
  explicit Labels(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}

 private:
  std::shared_ptr<const Rep> rep_;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// metadata.ownerReferences, in API order. Read like a const std::vector.
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
  bool SharesStorageWith(const OwnerReferences& other) const { return rep_ == other.rep_; }

  friend bool operator==(const OwnerReferences& a, const OwnerReferences& b);

  using Rep = std::vector<OwnerReference>;
  explicit OwnerReferences(std::shared_ptr<const Rep> rep) : rep_(std::move(rep)) {}

 private:
  std::shared_ptr<const Rep> rep_;
};

}  // namespace kcm::api
