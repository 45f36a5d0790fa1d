// Upstream kube-controller-manager's command-line surface, generated from the pinned release's
// --help by hack/gen-upstream-flags.py (upstream_flags.cc): every flag with its section, type and
// default, the feature gate names and the controller names. The flags this binary acts on are
// defined in flags.cc; DefineUpstreamOnlyFlags adds the rest as accepted-and-reported. Read-only
// data; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace kcm::app {

class FlagSet;

struct UpstreamFlag {
  const char* section;
  const char* name;
  const char* shorthand;
  const char* type;  // empty for booleans
  const char* default_text;
};

const std::vector<UpstreamFlag>& UpstreamFlags();
const std::vector<std::string>& UpstreamSections();  // in upstream's --help order
const std::vector<std::string>& UpstreamFeatureGates();
const std::vector<std::string>& UpstreamControllerNames();

// Creates upstream's sections, in upstream's order, so our flags land in the same places.
void DeclareUpstreamSections(FlagSet& set);
// Adds every upstream flag the set does not define yet, as accepted but not acted on.
void DefineUpstreamOnlyFlags(FlagSet& set);

}  // namespace kcm::app
