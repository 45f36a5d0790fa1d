#include "pkg/api/compare_resource_version.h"

#include <algorithm>
#include <string>

namespace kcm::api {

bool IsWellFormedResourceVersion(std::string_view rv) {
  return !rv.empty() && rv[0] != '0' &&
         std::all_of(rv.begin(), rv.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Result<int> CompareResourceVersion(std::string_view a, std::string_view b) {
  for (std::string_view rv : {a, b}) {
    if (!IsWellFormedResourceVersion(rv)) {
      return Error::Local("InvalidResourceVersion",
                          "resourceVersion \"" + std::string(rv) +
                              "\" is not a positive decimal number without leading zeros");
    }
  }
  // Digits only and no leading zeros: the longer number is the larger; equal lengths compare
  // digit by digit.
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace kcm::api
