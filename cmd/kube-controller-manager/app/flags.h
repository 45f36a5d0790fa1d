// Command-line parsing for the daemon: upstream flag spellings (with dashes) on top of gflags.
// Call once from main, before any thread starts; not thread-safe (gflags state is global).
#pragma once

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/util/result.h"

namespace kcm::app {

// Parses argv into Options. Flag names use upstream's dashes (--kube-api-qps); gflags' own
// underscore spelling works too. Unknown flags end the process with gflags' message (exit 1);
// malformed values come back as an error naming the flag.
Result<Options> ParseFlags(int argc, char** argv);

// "--name=value" lines for every flag we define, in a stable order, for the start-up log.
std::string EffectiveFlags(const Options& options);

}  // namespace kcm::app
