// GenericObject: a schema-less object (metadata + raw JSON) for any resource the typed model does
// not cover. Immutable once cached; thread-safe to read.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/object.h"

namespace kcm::api {

struct GenericObject final : Object {
  ObjectMeta metadata;
  std::string kind;  // the object's `kind`, or the list's kind without "List" for list items
  std::string raw_json;

  std::string_view Kind() const override { return kind; }
  const ObjectMeta& Meta() const override { return metadata; }
};

}  // namespace kcm::api
