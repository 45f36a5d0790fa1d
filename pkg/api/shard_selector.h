// ShardSelector: the shardSelector list option of LIST and WATCH (metav1.ListOptions.ShardSelector,
// feature gate ShardedListAndWatch): a set of ranges of the 64-bit FNV-1a hash of one field of
// the object (its namespace or uid), joined with ||. The API server answers only the objects
// whose field hashes into one of the ranges, and echoes the selector in the list's
// metadata.shardInfo.selector. Plain data; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::api {

// FNV-1a 64 over `value`: the hash the API server compares (upstream sharding.HashField).
uint64_t ShardHash(std::string_view value);

// The closed range [first, last] of the hash space. Closed, so that the whole space
// [0, 2^64) needs no 65-bit end; on the wire the end is exclusive (last + 1, "0x10000000000000000"
// for the top of the space).
struct ShardRange {
  uint64_t first = 0;
  uint64_t last = UINT64_MAX;

  bool Contains(uint64_t hash) const { return hash >= first && hash <= last; }
  friend bool operator==(const ShardRange&, const ShardRange&) = default;
};

// 16 lowercase hex digits with the 0x prefix (how the server writes bounds), and the exclusive end
// of `r` in that form ("0x10000000000000000" when r ends at the top of the space).
std::string ShardHex(uint64_t value);
std::string ShardEndHex(const ShardRange& r);

// The range from its wire bounds: start "0x" + 16 lowercase hex digits, end the same or
// "0x10000000000000000" (exclusive), start < end. What ShardSelector::Parse takes in each
// shardRange(…), and the shard map's entries hold.
Result<ShardRange> ParseShardRange(std::string_view start, std::string_view end);

enum class ShardField { kNamespace, kUid };

class ShardSelector {
 public:
  ShardSelector() = default;  // empty: selects nothing (a replica that serves no range)
  ShardSelector(ShardField field, std::vector<ShardRange> ranges);

  // Parses the wire form (what String writes, and what the server echoes): one or more
  // `shardRange(object.metadata.namespace|uid, '0x…', '0x…')` joined with ||, every range on one
  // field, bounds 16 hex digits (the end may be 0x10000000000000000), start < end. Errors name the
  // first thing wrong.
  static Result<ShardSelector> Parse(std::string_view text);

  // The wire form: "shardRange(object.metadata.namespace, '0x…', '0x…') || …", in the order the
  // ranges were given (the server echoes it in the same order).
  std::string String() const;

  // Whether `value` (a namespace or uid, per field()) hashes into one of the ranges.
  bool Matches(std::string_view value) const;
  // Whether the object's namespace or uid (per field()) does.
  bool Matches(const Object& object) const;

  bool Empty() const { return ranges_.empty(); }
  ShardField field() const { return field_; }
  const std::vector<ShardRange>& ranges() const { return ranges_; }
  friend bool operator==(const ShardSelector&, const ShardSelector&) = default;

 private:
  ShardField field_ = ShardField::kNamespace;
  std::vector<ShardRange> ranges_;
};

}  // namespace kcm::api
