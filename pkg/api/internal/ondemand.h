// Private to pkg/api .cc files (never include from a public header): simdjson on-demand helpers
// shared by the decoders. Stateless functions; thread-safe.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/api/internal/decode_error.h"
#include "pkg/util/result.h"

namespace kcm::api::internal {

namespace od = simdjson::ondemand;

Error DecodeErrorAt(std::string_view path, simdjson::error_code ec);

// Reads a string (unescaped). Null reads as "" (Go's zero value).
simdjson::error_code ReadString(od::value v, std::string* out);
// The same as a view into the parser's string buffer (valid until the next parse).
simdjson::error_code ReadStringView(od::value v, std::string_view* out);
// Reads an integer into [min,max]; null reads as 0. NUMBER_OUT_OF_RANGE past the bounds.
simdjson::error_code ReadInt(od::value v, int64_t min, int64_t max, int64_t* out);
simdjson::error_code ReadBool(od::value v, bool* out);

// The exact source text of any value (object, array or scalar), trailing whitespace removed.
simdjson::error_code RawJson(od::value v, std::string_view* out);

// Compares an object key as it appears in the source (escapes intact) with a plain key.
inline bool KeyIs(od::field& f, std::string_view key) {
  return f.key() == key;
}

}  // namespace kcm::api::internal
