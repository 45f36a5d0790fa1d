// What /flagz lists: every flag of the command line with its value as upstream's pflag values
// print themselves (Value.String(): "15s" for a duration, "[a,b]" for a list, "true" for a bare
// boolean), the default where the command line left it, as upstream's flagz.NamedFlagSetsReader
// (apiserver pkg/server/flagz) reads them. Pure; thread-compatible.
#pragma once

#include <map>
#include <string>

namespace kcm::app {

class FlagSet;

// Flag name (without dashes) → value.
std::map<std::string, std::string> FlagzValues(const FlagSet& flags);

// One value as pflag's Value.String() prints it for a flag of pflag type `type` (FlagSet's type
// names; "" for booleans), from the text given on the command line; the text itself when it
// does not parse as that type.
std::string PflagValueString(const std::string& type, const std::string& given);

}  // namespace kcm::app
