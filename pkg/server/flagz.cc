#include "pkg/server/flagz.h"

#include <memory>
#include <mutex>

#include "pkg/server/zpage_negotiation.h"
#include "pkg/server/zpage_text.h"

namespace kcm::server {
namespace {

namespace json = api::json;

struct Flagz {
  std::string component;
  FlagReader read;
  std::once_flag text_once;
  std::string text;  // written once under text_once

  const std::string& Text() {
    std::call_once(text_once, [this] {
      const std::string separator = RandomZpageSeparator();
      text = ZpageTextHeader(component, "flagz");
      for (const auto& [name, value] : read()) text += name + separator + value + "\n";
    });
    return text;
  }

  json::Value Object(const std::string& version) const {
    json::Value::Object members;
    for (const auto& [name, value] : read()) {
      members.emplace_back(name, json::Value::String(value));
    }
    json::Value o = json::Value::MakeObject({
        {"kind", json::Value::String("Flagz")},
        {"apiVersion", json::Value::String(std::string(kZpageGroup) + "/" + version)},
        {"metadata", json::Value::MakeObject({{"name", json::Value::String(component)}})},
    });
    if (!members.empty()) o.Set("flags", json::Value::MakeObject(std::move(members)));
    return o;
  }
};

}  // namespace

Handler NewFlagzHandler(std::string component, FlagReader read) {
  auto state = std::make_shared<Flagz>();
  state->component = std::move(component);
  state->read = std::move(read);
  // Every method gets the page, as upstream's handler does (the authorizer saw the verb).
  return [state](const Request& request) {
    auto negotiated = NegotiateZpage(request, "Flagz");
    if (auto* error = std::get_if<Response>(&negotiated)) return *error;
    const auto& format = std::get<ZpageFormat>(negotiated);
    if (format.type == ZpageFormat::Type::kText) return TextResponse(200, state->Text());
    return StructuredZpage(format, state->Object(format.version), "flagz");
  };
}

}  // namespace kcm::server
