// The daemon's command line: every flag of upstream kube-controller-manager, parsed into Options.
// Flags that concern our controllers, serving, the client, leader election and logging are acted
// on; flags of controllers this binary does not run are accepted and reported (NotApplicable).
// glog's own flags stay in gflags (the logging library reads them); of those, only -v and
// --vmodule are on the command line, as upstream. Built and parsed once in main; not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cmd/kube-controller-manager/app/options.h"
#include "pkg/util/result.h"

namespace kcm::app {

class FlagSet;

class CommandLine {
 public:
  CommandLine();
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv. An error carries pflag's wording ("unknown flag: --foo"); main prints the usage
  // and "Error: <message>" to stderr and exits 1, as upstream's command does.
  Status Parse(int argc, char** argv);

  const Options& options() const { return options_; }
  bool help_requested() const { return help_; }
  // "" (not asked), "true" (one line) or "raw" (every build fact), as upstream's --version.
  const std::string& version_requested() const { return version_; }
  // The version to report instead of the build's (--version=vX.Y.Z), or "".
  const std::string& reported_version() const { return reported_version_; }
  // Dashed names of flags given on the command line that this binary accepts but does not act on.
  const std::vector<std::string>& NotApplicable() const;
  // Every flag's effective value, as /flagz lists them (flagz_values.h).
  std::map<std::string, std::string> FlagValues() const;

  void PrintUsage(std::ostream& out) const;

 private:
  void Define();

  Options options_;
  bool help_ = false;
  std::string version_;
  std::string reported_version_;
  std::unique_ptr<FlagSet> flags_;
};

// "--name=value" for every flag we act on, in a stable order, for the start-up log.
std::string EffectiveFlags(const Options& options);

}  // namespace kcm::app
