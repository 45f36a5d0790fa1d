// Content negotiation of the z-pages /statusz and /flagz (upstream apiserver's
// statusz/flagz handlers over negotiation.NegotiateOutputMediaType with their endpoint
// restrictions): no Accept header, or one that takes text/plain without a kind, gets the
// text page; application/json or application/yaml only with the kind spelled out
// (`application/json;g=config.k8s.io;v=v1beta1;as=Statusz`), v1alpha1 too but deprecated;
// anything else is 406 Not Acceptable with upstream's Status body (JSON or YAML when a clause
// takes them without a kind, else indented JSON). Accept clauses are read as
// upstream's goautoneg reads them (highest q first, then the more specific). Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "pkg/api/json.h"
#include "pkg/server/handler.h"

namespace kcm::server {

inline constexpr const char* kZpageGroup = "config.k8s.io";

struct ZpageFormat {
  enum class Type { kText, kJson, kYaml } type = Type::kText;
  std::string version;      // "v1beta1" or "v1alpha1" for kJson/kYaml
  bool deprecated = false;  // v1alpha1: the answer carries upstream's Warning header
  bool pretty = false;      // JSON indented (pretty=1 in the clause, ?pretty=true, curl)
  // kJson/kYaml: the answer's Content-Type, "application/json;g=config.k8s.io;v=v1beta1;as=Flagz"
  std::string content_type;
};

// The format `request` asks for of `kind` ("Statusz", "Flagz"), or the 406 answer.
std::variant<ZpageFormat, Response> NegotiateZpage(const Request& request, std::string_view kind);

// Renders `object` (which carries its own kind and apiVersion) as `format` asks; for kText the
// caller renders its own page. The Warning header of a deprecated version is added, naming
// `endpoint` ("statusz").
Response StructuredZpage(const ZpageFormat& format, const api::json::Value& object,
                         std::string_view endpoint);

}  // namespace kcm::server
