// /configz (upstream component-base configz.InstallHandler): the component's effective
// configuration as one JSON object keyed by the configuration's name, e.g.
// {"kubecontrollermanager.config.k8s.io": {"kind": ..., "apiVersion": ..., ...}}, compact and
// without a trailing newline, whatever the method, as upstream's. The handler is thread-safe.
#pragma once

#include <string>

#include "pkg/api/json.h"
#include "pkg/server/handler.h"

namespace kcm::server {

// `config` must carry its kind and apiVersion (upstream's Config.Set refuses one without).
Handler NewConfigzHandler(const std::string& name, const api::json::Value& config);

}  // namespace kcm::server
