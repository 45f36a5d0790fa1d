// URL building for API requests: resource paths (/api/v1 for the core group, /apis/<g>/<v>
// otherwise), query encoding (url.Values.Encode: sorted keys, form escaping) and ListOptions as
// query parameters. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/list_options.h"
#include "pkg/api/resource.h"

namespace kcm::client {

struct GroupVersionResource {
  std::string group;  // "" for the core group
  std::string version;
  std::string resource;  // plural lower-case: "pods", "deployments"

  static GroupVersionResource Of(const api::Resource& r) {
    return {std::string(r.group), std::string(r.version), std::string(r.resource)};
  }
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// /api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]] or /apis/<group>/<version>/...
// The namespace segment is written only when `ns` is non-empty.
std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name = "", std::string_view subresource = "");

// Form escaping of one query component (space -> '+', unreserved bytes kept, others %XX).
std::string QueryEscape(std::string_view s);
// "k1=v1&k2=v2" with keys sorted (stable for equal keys), "" for no params.
std::string EncodeQuery(const QueryParams& params);

// Adds the non-default fields of `options`; `watch` adds watch=true and the watch-only fields.
void AppendListOptions(const api::ListOptions& options, bool watch, QueryParams* params);

}  // namespace kcm::client
