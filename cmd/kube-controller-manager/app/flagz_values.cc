#include "cmd/kube-controller-manager/app/flagz_values.h"

#include <array>
#include <charconv>

#include "cmd/kube-controller-manager/app/flag_set.h"
#include "pkg/util/duration.h"

namespace kcm::app {
namespace {

bool IsListType(const std::string& type) {
  return type == "strings" || type == "stringSlice";
}

// The value of a flag the command line did not set: its "(default ...)" text without pflag's
// quotes, or the zero value pflag prints for the type when --help shows no default.
std::string DefaultValue(const Flag& flag) {
  std::string text = flag.default_text;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    return text.substr(1, text.size() - 2);
  }
  if (!text.empty()) return text;
  if (flag.is_bool()) return "false";
  if (IsListType(flag.type)) return "[]";
  if (flag.type == "duration") return "0s";
  if (flag.type.rfind("int", 0) == 0 || flag.type.rfind("uint", 0) == 0 ||
      flag.type.rfind("float", 0) == 0 || flag.type == "Level" || flag.type == "quantity") {
    return "0";
  }
  if (flag.type.rfind("version", 0) == 0) return "false";  // --version, a bool that takes "raw"
  return "";
}

// strconv.FormatFloat(v, 'g', -1, bits): the shortest text that reads back the same value.
template <typename Float>
std::string ShortestFloat(const std::string& given) {
  Float f = 0;
  auto parsed = std::from_chars(given.data(), given.data() + given.size(), f);
  if (parsed.ec != std::errc() || parsed.ptr != given.data() + given.size()) return given;
  std::array<char, 48> buf;
  auto printed = std::to_chars(buf.data(), buf.data() + buf.size(), f);
  return printed.ec == std::errc() ? std::string(buf.data(), printed.ptr) : given;
}

}  // namespace

std::string PflagValueString(const std::string& type, const std::string& given) {
  if (type.empty()) {  // strconv.ParseBool's spellings, printed back as strconv.FormatBool.
    for (const char* t : {"1", "t", "T", "true", "TRUE", "True"}) {
      if (given == t) return "true";
    }
    for (const char* f : {"0", "f", "F", "false", "FALSE", "False"}) {
      if (given == f) return "false";
    }
    return given;
  }
  if (type == "duration") {
    auto d = ParseDuration(given);
    return d.ok() ? FormatDuration(*d) : given;
  }
  if (IsListType(type)) {
    // pflag's stringSlice reads the text as one CSV record and prints "[a,b]"; entries are
    // kept as given, spaces included.
    return given.empty() ? "[]" : "[" + given + "]";
  }
  if (type.rfind("int", 0) == 0 || type == "Level") {
    long long n = 0;
    auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), n);
    if (ec != std::errc() || end != given.data() + given.size()) return given;
    return std::to_string(n);
  }
  if (type == "float32") return ShortestFloat<float>(given);
  if (type == "float64") return ShortestFloat<double>(given);
  return given;
}

std::map<std::string, std::string> FlagzValues(const FlagSet& flags) {
  std::map<std::string, std::string> out;
  for (const FlagSection& section : flags.sections()) {
    for (const Flag& flag : section.flags) {
      if (flag.hidden) continue;
      const std::string* given = flags.LastValue(flag.name);
      out[flag.name] = given ? PflagValueString(flag.type, *given) : DefaultValue(flag);
    }
  }
  return out;
}

}  // namespace kcm::app
