// /flagz (upstream apiserver pkg/server/flagz, beta and on by default since v1.36 behind the
// ComponentFlagz gate): every command-line flag with its effective value. A text page by
// default (upstream's not-machine-parseable header, then "name<sep>value" lines sorted by name,
// the separator chosen at random once and kept, as upstream caches its first text answer), or
// config.k8s.io/v1beta1 (v1alpha1, deprecated) Flagz in JSON or YAML when the Accept header asks
// for that kind (zpage_negotiation.h). The handler is thread-safe.
#pragma once

#include <map>
#include <string>

#include "pkg/server/handler.h"

namespace kcm::server {

// `flags`: name (no dashes) → value as the flag prints it.
Handler NewFlagzHandler(std::string component, std::map<std::string, std::string> flags);

}  // namespace kcm::server
