// /statusz (upstream apiserver pkg/server/statusz, beta and on by default since v1.36 behind
// the ComponentStatusz gate): when the process started, how long it has been up, its versions
// and the paths it serves. A text page by default — prefixed by upstream's warning that it is
// not machine-parseable, with one of four separators chosen at random per answer so that no one
// parses it — or config.k8s.io/v1beta1 (v1alpha1, deprecated) Statusz in JSON or YAML when the
// Accept header asks for that kind (zpage_negotiation.h). The handler is thread-safe.
#pragma once

#include <string>
#include <vector>

#include "pkg/server/handler.h"

namespace kcm::server {

struct StatuszInfo {
  std::string component;          // "kube-controller-manager"
  double start_time_seconds = 0;  // since the epoch
  std::string go_version;         // upstream's Go toolchain; "" for a binary built without Go
  std::string binary_version;     // "1.37.2"
  std::string emulation_version;  // "1.37"; "" leaves it out
  // The served paths; each is reported by its first segment ("/metrics/slis" → "/metrics"),
  // sorted, once (upstream's aggregatePaths).
  std::vector<std::string> paths;
};

Handler NewStatuszHandler(StatuszInfo info);

}  // namespace kcm::server
