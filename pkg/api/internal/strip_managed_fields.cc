#include "pkg/api/internal/strip_managed_fields.h"

#include <cstddef>
#include <optional>

#include "pkg/api/internal/raw_json.h"

namespace kcm::api::internal {

bool ManagedFieldsRange(std::string_view json, size_t* cut_begin, size_t* cut_end) {
  // Text the raw scanner cannot be sure of (an escaped or repeated key on the path) keeps its
  // managedFields: a few more cached bytes, never a lost field.
  std::optional<bool> found =
      RawEraseRange(json, {"metadata", "managedFields"}, cut_begin, cut_end);
  return found.value_or(false);
}

std::string StripManagedFields(std::string_view json) {
  size_t begin = 0, end = 0;
  if (!ManagedFieldsRange(json, &begin, &end)) return std::string(json);
  std::string out;
  out.reserve(json.size() - (end - begin));
  out.append(json.substr(0, begin));
  out.append(json.substr(end));
  return out;
}

}  // namespace kcm::api::internal
