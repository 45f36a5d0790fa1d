// json::Value: a small JSON document model for the write path (patches, full-object encodes, the
// pod template) and for canonical comparison/hashing. Numbers keep their source text so nothing is
// lost; object members keep insertion order. Plain value type; thread-compatible.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::api::json {

enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

class Value {
 public:
  using Array = std::vector<Value>;
  using Member = std::pair<std::string, Value>;
  using Object = std::vector<Member>;  // insertion-ordered; keys unique

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(int64_t n);
  // `text` must be a valid JSON number literal (checked by Parse, trusted here).
  static Value NumberText(std::string text);
  static Value String(std::string s);
  static Value MakeArray(Array items = {});
  static Value MakeObject(Object members = {});

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Accessors; calling one for the wrong type is a programming error (std::bad_variant_access).
  bool as_bool() const { return std::get<bool>(v_); }
  std::string_view number_text() const { return std::get<Num>(v_).text; }
  // The number as an int64 when it is an integer literal in range.
  std::optional<int64_t> as_int64() const;
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Object member lookup; nullptr when this is not an object or the key is absent.
  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);
  // Sets a member (replacing in place, or appending). Turns a null into an empty object first.
  Value& Set(std::string_view key, Value v);
  // Removes a member; false when absent or not an object.
  bool Erase(std::string_view key);

  // Structural equality (member order matters; numbers compare by text). For semantic equality
  // use SemanticEqual.
  friend bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

 private:
  struct Num {
    std::string text;
    friend bool operator==(const Num&, const Num&) = default;
  };
  std::variant<std::monostate, bool, Num, std::string, Array, Object> v_;
};

// Parses one JSON document (copies into a padded buffer; this is the write/test path, the hot
// read path uses the typed decoders). Errors: reason "DecodeError".
Result<Value> Parse(std::string_view text);

// Compact serialization: no whitespace, members in stored order, strings escaped per RFC 8259
// (quote, backslash and all control characters; UTF-8 passes through unchanged, and a byte that
// is not UTF-8 becomes U+FFFD, as Go's encoding/json writes it).
std::string Serialize(const Value& v);
void SerializeTo(const Value& v, std::string* out);
// Appends `s` as a quoted, escaped JSON string.
void AppendQuoted(std::string_view s, std::string* out);

// Canonical form: object keys sorted (byte order) recursively, numbers normalized (integers
// printed without sign of zero/leading zeros/exponent; other numbers as the shortest round-trip
// double). With drop_empty, nulls, {} and [] members are removed, which mirrors Go's
// semantic DeepEqual where nil and empty maps/slices are equal and omitempty fields vanish.
struct CanonicalOptions {
  bool drop_empty = false;
};
Value Canonical(const Value& v, CanonicalOptions options = {});
std::string CanonicalString(const Value& v, CanonicalOptions options = {});
// Equality of the drop_empty canonical forms.
bool SemanticEqual(const Value& a, const Value& b);

// Path helpers over object members (path segments are keys; dots are not separators because
// label keys contain them).
using Path = std::initializer_list<std::string_view>;
const Value* GetPath(const Value& root, Path path);
// Creates intermediate objects as needed (a null intermediate becomes an object); fails with
// "InvalidPath" when an intermediate exists and is not an object.
Status SetPath(Value& root, Path path, Value v);
// False when the path does not exist.
bool ErasePath(Value& root, Path path);

}  // namespace kcm::api::json
