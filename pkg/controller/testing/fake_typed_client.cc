#include "pkg/controller/testing/fake_typed_client.h"

#include <utility>

#include "pkg/api/json.h"
#include "pkg/api/object_builders.h"
#include "pkg/client/api_errors.h"

namespace kcm::controller::testing {
namespace detail {

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

Error NotFound(std::string_view resource, std::string_view name) {
  return client::DecodeApiError(
      404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":")" +
               std::string(resource) + " \\\"" + std::string(name) + "\\\" not found\"}");
}

// What an API server does to a written object: a create gets a uid and a creationTimestamp, every
// write a new resourceVersion.
Result<std::string> AsStored(const std::string& verb, const std::string& body, int64_t rv) {
  return api::MutateRawJson(body, [&](api::json::Value& obj) -> Status {
    if (verb == "create") {
      const api::json::Value* name = api::json::GetPath(obj, {"metadata", "name"});
      const std::string n = name != nullptr ? name->as_string() : "";
      if (Status s =
              api::json::SetPath(obj, {"metadata", "uid"}, api::json::Value::String("uid-" + n));
          !s.ok()) {
        return s;
      }
      if (Status s = api::json::SetPath(obj, {"metadata", "creationTimestamp"},
                                        api::json::Value::String("2023-06-01T00:00:00Z"));
          !s.ok()) {
        return s;
      }
    }
    return api::json::SetPath(obj, {"metadata", "resourceVersion"},
                              api::json::Value::String(std::to_string(rv)));
  });
}

std::string NameOf(const std::string& body) {
  auto v = api::json::Parse(body);
  if (!v.ok()) return "";
  const api::json::Value* name = api::json::GetPath(*v, {"metadata", "name"});
  return name != nullptr ? name->as_string() : "";
}

}  // namespace detail
}  // namespace kcm::controller::testing
