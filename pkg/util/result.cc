#include "pkg/util/result.h"

namespace kcm {

std::string Error::ToString() const {
  std::string out;
  if (code != 0) out += std::to_string(code) + " ";
  if (!reason.empty()) out += reason + ": ";
  out += message;
  return out;
}

}  // namespace kcm
