// /flagz (upstream apiserver pkg/server/flagz, beta and on by default since v1.36 behind the
// ComponentFlagz gate): every command-line flag with its effective value. A text page by
// default (upstream's not-machine-parseable header, then "name<sep>value" lines sorted by name;
// upstream caches its first text answer, separator and values, and so does this), or
// config.k8s.io/v1beta1 (v1alpha1, deprecated) Flagz in JSON or YAML when the Accept header asks
// for that kind (zpage_negotiation.h), read afresh each time as upstream's. The handler is
// thread-safe if the reader is.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "pkg/server/handler.h"

namespace kcm::server {

// The flags now: name (no dashes) → value as the flag prints it (upstream's flagz.Reader).
using FlagReader = std::function<std::map<std::string, std::string>()>;

Handler NewFlagzHandler(std::string component, FlagReader read);

}  // namespace kcm::server
