// FlagSet: the daemon's command-line surface, parsed the way upstream's (spf13/pflag under cobra)
// is: `--name=value`, `--name value`, bare `--name` for booleans, `-v=2`/`-v 2` shorthands, `--`
// ends the flags. Errors use pflag's wording ("unknown flag: --foo"). Flags are grouped in named
// sections, printed by PrintUsage in upstream's --help layout. Built and parsed once in main;
// not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::app {

struct Flag {
  std::string name;       // "kube-api-qps"
  std::string shorthand;  // "v" for -v; usually empty
  // pflag's type name as --help shows it: "string", "int32", "float32", "duration", "strings",
  // "mapStringBool", "Level", ... Empty for a boolean flag.
  std::string type;
  std::string default_text;  // printed as "(default ...)" when non-empty
  std::string usage;
  // Applies a value. Null for a flag we accept but do not act on (a controller we do not run):
  // its value is recorded and reported once at start instead.
  std::function<Status(const std::string& value)> set;
  bool hidden = false;  // parsed, but left out of --help (glog's internals)

  bool is_bool() const { return type.empty(); }
};

struct FlagSection {
  std::string title;  // "Generic flags"
  std::vector<Flag> flags;
};

class FlagSet {
 public:
  explicit FlagSet(std::string command) : command_(std::move(command)) {}

  FlagSection& Section(const std::string& title);

  // Parses argv[1..]. The first error is returned with pflag's wording; flags before it were
  // applied. Positional arguments are an error, as upstream's command takes none.
  Status Parse(const std::vector<std::string>& args);

  // Names (dashed) of the flags that were set on the command line and that we do not act on.
  const std::vector<std::string>& NotApplicableSet() const { return not_applicable_set_; }
  bool Changed(const std::string& name) const;
  bool Has(const std::string& name) const;
  // The last value the command line gave the flag (bare boolean flags: "true"), or nullptr.
  const std::string* LastValue(const std::string& name) const;
  const std::vector<FlagSection>& sections() const { return sections_; }

  // Upstream's --help layout: description, "Usage:", then each section's flags sorted by name and
  // aligned in columns.
  void PrintUsage(std::ostream& out, const std::string& description) const;

 private:
  Flag* Find(const std::string& name);
  Flag* FindShorthand(const std::string& shorthand);
  Status Apply(Flag& flag, const std::string& value);

  std::string command_;
  std::vector<FlagSection> sections_;
  std::vector<std::string> changed_;
  std::map<std::string, std::string> last_values_;
  std::vector<std::string> not_applicable_set_;
};

}  // namespace kcm::app
