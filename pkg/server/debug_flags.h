// /debug/flags/<name> (upstream apiserver routes.DebugFlags with StringFlagPutHandler, which
// kube-controller-manager installs for "v" when --profiling is on): PUT a value to change a
// setting at run time. The answer is text: 200 with the setter's message, 400 with its error
// (or for a body that is not text), 406 for any other method, as upstream. The handler is
// thread-safe if the setter is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pkg/server/handler.h"
#include "pkg/util/result.h"

namespace kcm::server {

// Applies `value` (the PUT body as sent); returns the message to answer with.
using FlagSetter = std::function<Result<std::string>(const std::string& value)>;

Handler NewDebugFlagHandler(FlagSetter setter);

// The index page at /debug/flags and /debug/flags/: the names of the settable flags (upstream's
// DebugFlags.Index).
Handler NewDebugFlagsIndexHandler(std::vector<std::string> names);

}  // namespace kcm::server
