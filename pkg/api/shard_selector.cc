#include "pkg/api/shard_selector.h"

#include <cstdio>
#include <optional>

namespace kcm::api {
namespace {

constexpr uint64_t kFnv64Offset = 14695981039346656037ull;
constexpr uint64_t kFnv64Prime = 1099511628211ull;
constexpr std::string_view kTopOfSpace = "0x10000000000000000";

std::string_view FieldPath(ShardField field) {
  return field == ShardField::kNamespace ? "object.metadata.namespace" : "object.metadata.uid";
}

Error ParseError(std::string_view text, const std::string& why) {
  return Error::Local("InvalidShardSelector",
                      "shard selector \"" + std::string(text) + "\": " + why);
}

// A tiny reader over the selector's grammar; every Expect* skips leading blanks.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  void SkipBlanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  bool Consume(std::string_view token) {
    SkipBlanks();
    if (s_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }
  bool AtEnd() {
    SkipBlanks();
    return i_ == s_.size();
  }
  // A single-quoted literal's content.
  bool Quoted(std::string_view* out) {
    SkipBlanks();
    if (i_ >= s_.size() || s_[i_] != '\'') return false;
    size_t close = s_.find('\'', i_ + 1);
    if (close == std::string_view::npos) return false;
    *out = s_.substr(i_ + 1, close - i_ - 1);
    i_ = close + 1;
    return true;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

// "0x" + 16 lowercase hex digits → value; `end` also accepts the top of the space (sets *top).
bool ParseBound(std::string_view text, bool end, uint64_t* value, bool* top) {
  *top = false;
  if (end && text == kTopOfSpace) {
    *top = true;
    return true;
  }
  if (text.size() != 18 || text.substr(0, 2) != "0x") return false;
  uint64_t v = 0;
  for (char c : text.substr(2)) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *value = v;
  return true;
}

}  // namespace

uint64_t ShardHash(std::string_view value) {
  uint64_t h = kFnv64Offset;
  for (unsigned char c : value) {
    h ^= c;
    h *= kFnv64Prime;
  }
  return h;
}

std::string ShardHex(uint64_t value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string ShardEndHex(const ShardRange& r) {
  return r.last == UINT64_MAX ? std::string(kTopOfSpace) : ShardHex(r.last + 1);
}

Result<ShardRange> ParseShardRange(std::string_view start_text, std::string_view end_text) {
  uint64_t start = 0, end = 0;
  bool start_top = false, end_top = false;
  if (!ParseBound(start_text, false, &start, &start_top) ||
      !ParseBound(end_text, true, &end, &end_top)) {
    return Error::Local("InvalidShardSelector",
                        "a bound must be 0x and 16 lowercase hex digits (the end may be " +
                            std::string(kTopOfSpace) + ")");
  }
  if (!end_top && end <= start) {
    return Error::Local("InvalidShardSelector", "a range's start must be below its end");
  }
  return ShardRange{start, end_top ? UINT64_MAX : end - 1};
}

ShardSelector::ShardSelector(ShardField field, std::vector<ShardRange> ranges)
    : field_(field), ranges_(std::move(ranges)) {}

Result<ShardSelector> ShardSelector::Parse(std::string_view text) {
  Reader r(text);
  std::vector<ShardRange> ranges;
  std::optional<ShardField> field;
  do {
    if (!r.Consume("shardRange") || !r.Consume("(")) {
      return ParseError(text, "expected shardRange(");
    }
    ShardField f;
    if (r.Consume("object.metadata.namespace")) {
      f = ShardField::kNamespace;
    } else if (r.Consume("object.metadata.uid")) {
      f = ShardField::kUid;
    } else {
      return ParseError(text, "the field must be object.metadata.namespace or object.metadata.uid");
    }
    if (field && *field != f) return ParseError(text, "every range must use the same field");
    field = f;
    std::string_view start_text, end_text;
    if (!r.Consume(",") || !r.Quoted(&start_text) || !r.Consume(",") || !r.Quoted(&end_text) ||
        !r.Consume(")")) {
      return ParseError(text, "expected shardRange(field, '0x…', '0x…')");
    }
    auto range = ParseShardRange(start_text, end_text);
    if (!range.ok()) return ParseError(text, range.error().message);
    ranges.push_back(*range);
  } while (r.Consume("||"));
  if (!r.AtEnd()) return ParseError(text, "unexpected text after the last range");
  return ShardSelector(*field, std::move(ranges));
}

std::string ShardSelector::String() const {
  std::string out;
  for (const ShardRange& r : ranges_) {
    if (!out.empty()) out += " || ";
    out += "shardRange(";
    out += FieldPath(field_);
    out += ", '" + ShardHex(r.first) + "', '" + ShardEndHex(r) + "')";
  }
  return out;
}

bool ShardSelector::Matches(std::string_view value) const {
  const uint64_t h = ShardHash(value);
  for (const ShardRange& r : ranges_) {
    if (r.Contains(h)) return true;
  }
  return false;
}

bool ShardSelector::Matches(const Object& object) const {
  const ObjectMeta& m = object.Meta();
  if (field_ == ShardField::kNamespace) return Matches(m.namespace_.view());
  return Matches(m.uid.str());
}

}  // namespace kcm::api
