// GenericObject: a schema-less object (metadata + raw JSON) for any resource the typed model does
// not cover. Immutable once cached; thread-safe to read.
#pragma once

#include <memory>
#include <string>

#include "pkg/api/decoder.h"
#include "pkg/api/json_input.h"
#include "pkg/api/object.h"
#include "pkg/util/result.h"

namespace kcm::api {

struct GenericObject final : Object {
  ObjectMeta metadata;
  std::string kind;  // the object's `kind`, or the list's kind without "List" for list items
  std::string raw_json;

  std::string_view Kind() const override { return kind; }
  const ObjectMeta& Meta() const override { return metadata; }
};

Result<std::shared_ptr<const GenericObject>> DecodeGenericObject(Decoder& decoder, JsonInput json);

}  // namespace kcm::api
