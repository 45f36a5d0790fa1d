#include "pkg/api/status.h"

#include "pkg/api/internal/decode.h"

namespace kcm::api {

std::optional<Error> DecodeStatus(std::string_view body) {
  simdjson::padded_string padded(body);
  internal::od::parser parser;
  internal::od::document doc;
  if (parser.iterate(padded).get(doc)) return std::nullopt;
  internal::od::value root;
  if (doc.get_value().get(root)) return std::nullopt;
  internal::od::json_type t;
  if (root.type().get(t) || t != internal::od::json_type::object) return std::nullopt;
  // Read kind and the Status fields in one pass; the order of members is not fixed.
  std::string kind;
  Error err;
  Status s = internal::ForEachField(root, "", [&](internal::od::field& f) -> Status {
    if (internal::KeyIs(f, "kind")) return internal::ReadStringAt(f.value(), "kind", &kind);
    return OkStatus();
  });
  if (!s.ok() || kind != "Status") return std::nullopt;
  if (parser.iterate(padded).get(doc) || doc.get_value().get(root)) return std::nullopt;
  if (!internal::DecodeStatusValue(root, &err).ok()) return std::nullopt;
  return err;
}

}  // namespace kcm::api
