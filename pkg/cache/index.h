// Index functions and the maps an Indexer keeps (behaviour 5.2, 5.4). Type definitions and pure
// functions only; safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/object.h"

namespace kcm::cache {

// Computes the values under which an object is indexed. Must be pure and must not throw.
using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;

// Index name → function.
using Indexers = std::map<std::string, IndexFunc>;
// A store key's text in up to three pieces (namespace, "/", name): what a ThreadSafeStore holds
// for a key is the object, whose metadata spells it, not a copy of the text. Compares, hashes and
// prints as the concatenated text; any text converts to one piece.
struct KeyText {
  std::string_view first, second, third;

  KeyText() = default;
  KeyText(std::string_view text) : first(text) {}    // NOLINT: any text is a key
  KeyText(const std::string& text) : first(text) {}  // NOLINT
  KeyText(const char* text) : first(text) {}         // NOLINT
  KeyText(std::string_view a, std::string_view b, std::string_view c)
      : first(a), second(b), third(c) {}

  size_t size() const { return first.size() + second.size() + third.size(); }
  std::string str() const;
  // <0, 0, >0 as std::string_view::compare of the concatenated texts.
  friend int Compare(const KeyText& a, const KeyText& b);
  friend bool operator==(const KeyText& a, const KeyText& b) {
    return a.size() == b.size() && Compare(a, b) == 0;
  }
  friend bool operator<(const KeyText& a, const KeyText& b) { return Compare(a, b) < 0; }
};
// Hash of the concatenated text (std::hash of it): the same for every split of one text.
size_t HashKeyText(const KeyText& key);

// The key MetaNamespaceKeyFunc gives obj, as a view into its metadata: "namespace/name", or the
// name of a cluster-scoped object.
KeyText ObjectKeyText(const api::Object& obj);

// One object of a ThreadSafeStore and its key. The key is ObjectKeyText(*obj) unless own_key holds
// another (a store keyed by some other function; tests): the informers' keys are always the
// object's, so the common item is the object pointer alone. The store replaces obj (and own_key
// with it) in place on Update; the key text never changes while the item exists.
struct StoreItem {
  mutable api::ObjectPtr obj;
  mutable std::unique_ptr<const std::string> own_key;

  KeyText Key() const { return own_key ? KeyText(*own_key) : ObjectKeyText(*obj); }
};

// Orders items by their keys; also compares them with a key given as text.
struct KeyPtrLess {
  using is_transparent = void;
  static KeyText View(const StoreItem* item) { return item->Key(); }
  static KeyText View(const KeyText& key) { return key; }
  static KeyText View(std::string_view key) { return key; }
  bool operator()(const auto& a, const auto& b) const { return View(a) < View(b); }
};
// The keys under one indexed value, in key order: a sorted vector of pointers at the store's items
// (ThreadSafeStore's item set, node-based, so an item's address is stable), so a key is held once
// however many index values list it, and each listing costs one pointer — not a tree node (48 B),
// which at 50,000 cached pods with two indices was 4.6 MiB (docs/design/cache-memory.md,
// index key sets). Inserting or erasing moves the pointers after the position: O(n) in its size, a
// memmove of 8 B per key (at 50,000 keys in one namespace ≈ 200 kB, tens of microseconds), where a
// tree is O(log n).
class IndexKeySet {
 public:
  using const_iterator = std::vector<const StoreItem*>::const_iterator;

  // Adds `item` unless an item with its key is present.
  void insert(const StoreItem* item);
  // Removes the item with this key; false when absent.
  bool erase(const KeyText& key);
  bool contains(const KeyText& key) const;
  // Appends without ordering; Sort() must follow before any other call (bulk index rebuilds).
  void push_back_unsorted(const StoreItem* item) { keys_.push_back(item); }
  void Sort();
  // Gives back the room a bulk build's doubling left (after Sort(), for sets the index keeps).
  void ShrinkToFit();
  // Room held for keys (tests: the growth policy below keeps it near size()).
  size_t capacity() const { return keys_.capacity(); }

  const_iterator begin() const { return keys_.begin(); }
  const_iterator end() const { return keys_.end(); }
  size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

 private:
  // Makes room for one more key, growing by a quarter rather than doubling.
  void ReserveOneMore();

  std::vector<const StoreItem*> keys_;  // sorted by key, keys unique
};
// Indexed value → keys of the objects that produce it.
using Index = std::map<std::string, IndexKeySet, std::less<>>;
// Index name → index.
using Indices = std::map<std::string, Index>;

// The standard index every informer offers (behaviour 5.4).
inline constexpr char kNamespaceIndex[] = "namespace";

// Indexes an object by its namespace (a cluster-scoped object is indexed under "").
std::vector<std::string> MetaNamespaceIndexFunc(const api::Object& obj);

}  // namespace kcm::cache
