// The `--name=value` arguments of the benchmark programs. Header-only.
#pragma once

#include <string>
#include <string_view>

namespace kcm::bench {

// The value of `--name=value` among the arguments, or `def`.
inline std::string Flag(int argc, char** argv, std::string_view name, std::string def) {
  const std::string prefix = "--" + std::string(name) + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with(prefix)) return std::string(arg.substr(prefix.size()));
  }
  return def;
}

}  // namespace kcm::bench
