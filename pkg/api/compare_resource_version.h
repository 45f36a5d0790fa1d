// CompareResourceVersion: the order of two resourceVersions as kube-apiserver makes them (etcd
// revisions written as positive decimal numbers), the rule of upstream apimachinery's
// resourceversion.CompareResourceVersion. Clients otherwise treat resourceVersions as opaque text;
// this is the one place that orders them, so every caller applies the same rule.
#pragma once

#include <string_view>

#include "pkg/util/result.h"

namespace kcm::api {

// True for a positive decimal number without leading zeros ("1", "42"; not "", "0", "01", "1a").
bool IsWellFormedResourceVersion(std::string_view rv);

// -1, 0 or 1 as `a` is older than, the same as or newer than `b`; an error
// ("InvalidResourceVersion") when either is not well formed: such a pair is incomparable, never
// ordered by guesswork. Numbers of any width compare (no parse into a fixed-width integer).
Result<int> CompareResourceVersion(std::string_view a, std::string_view b);

}  // namespace kcm::api
