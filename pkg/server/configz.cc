#include "pkg/server/configz.h"

namespace kcm::server {

Handler NewConfigzHandler(const std::string& name, const api::json::Value& config) {
  // The configuration is fixed at start: serialize once.
  std::string body = api::json::Serialize(api::json::Value::MakeObject({{name, config}}));
  return [body = std::move(body)](const Request&) {
    return Response{200, "application/json", body, {}};
  };
}

}  // namespace kcm::server
