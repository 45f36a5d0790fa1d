// Test helper: reads a file from test/testdata/api. Test-only.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kcm::api::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline std::string ApiTestdata(const std::string& name) {
  return ReadFile(std::string(KCM_API_TESTDATA) + "/" + name);
}

}  // namespace kcm::api::testing
