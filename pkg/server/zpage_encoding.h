// The structured z-page bodies' two encodings besides compact JSON, as upstream's serializers
// print them: indented JSON (the "pretty" form) and YAML. Pure; thread-safe.
#pragma once

#include <string>

#include "pkg/api/json.h"

namespace kcm::server {

// JSON of `v` indented by two spaces per level, as Go's json.MarshalIndent(v, "", "  ").
std::string IndentedJson(const api::json::Value& v);

// YAML of `v` as sigs.k8s.io/yaml prints it: object keys sorted, block style, two-space maps,
// list items at their key's indentation; a string quoted only where plain YAML would read
// something else (a number, a bool, null: double quotes; an indicator character: single quotes).
std::string Yaml(const api::json::Value& v);

}  // namespace kcm::server
