// libFuzzer target for the daemon's command line (CommandLine over FlagSet, and the value parsers
// behind it: numbers, booleans, lists, durations, feature gates, --vmodule). The input is the
// arguments, one a line (at most 64). Checked: parsing succeeds or fails with reason InvalidFlag
// (no exception escapes); after a success, the effective flags the daemon logs at start
// (EffectiveFlags, "--name=value ..."), given back as a command line, parse and mean the same
// (the same EffectiveFlags, and the same --kube-api-qps to the bit), so what the log shows is
// what was run.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/kube-controller-manager/app/flags.h"
#include "fuzz/check.h"

namespace {

using kcm::app::CommandLine;

using kcm::fuzz::Check;

kcm::Status ParseArgs(CommandLine& cl, std::vector<std::string> args) {
  std::vector<char*> argv;
  std::string program = "kube-controller-manager";
  argv.push_back(program.data());
  for (std::string& a : args) argv.push_back(a.data());
  return cl.Parse(static_cast<int>(argv.size()), argv.data());
}

// The names EffectiveFlags prints, in its order (read off the defaults, whose values hold no
// " --").
const std::vector<std::string>& EffectiveNames() {
  static const std::vector<std::string> names = [] {
    CommandLine defaults;
    std::string text = " " + kcm::app::EffectiveFlags(defaults.options());
    std::vector<std::string> out;
    for (size_t at = text.find(" --"); at != std::string::npos; at = text.find(" --", at + 1)) {
      out.push_back(text.substr(at + 3, text.find('=', at) - at - 3));
    }
    return out;
  }();
  return names;
}

// EffectiveFlags' text cut back into "--name=value" arguments; false when a value itself holds
// " --<name>=" for one of the names, so the cut would be ambiguous.
bool CutEffective(const std::string& effective, std::vector<std::string>* args) {
  const std::string text = " " + effective;
  const std::vector<std::string>& names = EffectiveNames();
  std::vector<size_t> starts;
  for (const std::string& name : names) {
    const std::string marker = " --" + name + "=";
    const size_t at = text.find(marker);
    if (at == std::string::npos || text.find(marker, at + 1) != std::string::npos) return false;
    if (!starts.empty() && at < starts.back()) return false;
    starts.push_back(at);
  }
  for (size_t i = 0; i < starts.size(); ++i) {
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : text.size();
    args->push_back(text.substr(starts[i] + 1, end - starts[i] - 1));
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  while (!in.empty() && args.size() < 64) {
    const size_t nl = in.find('\n');
    args.emplace_back(in.substr(0, nl));
    in = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
  }
  CommandLine cl;
  kcm::Status s = ParseArgs(cl, args);
  if (!s.ok()) {
    Check(s.error().reason == "InvalidFlag" && !s.error().message.empty());
    return 0;
  }
  const std::string effective = kcm::app::EffectiveFlags(cl.options());
  std::vector<std::string> again_args;
  if (!CutEffective(effective, &again_args)) return 0;
  CommandLine again;
  Check(ParseArgs(again, again_args).ok());
  Check(kcm::app::EffectiveFlags(again.options()) == effective);
  // A float is the value most easily printed lossily: compare it to the bit.
  const double a = cl.options().kube_api_qps, b = again.options().kube_api_qps;
  Check(a == b || (std::isnan(a) && std::isnan(b)));
  return 0;
}
