// Private to pkg/api .cc files: the one error shape of every decoder (JSON, protobuf, streaming
// list): reason "DecodeError", message "<field path>: <what>". Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace kcm::api::internal {

// The reason every decode failure carries.
inline constexpr std::string_view kDecodeError = "DecodeError";

Error DecodeErrorAt(std::string_view path, std::string_view what);

// An item's error as the whole-list decoders report it: "metadata.name: x" with prefix
// "items[3]" → "items[3].metadata.name: x"; a message without a path gets "items[3]: ".
Error PrefixErrorPath(Error e, std::string_view prefix);

// "items[i]".
std::string ListItemPath(size_t i);

}  // namespace kcm::api::internal
